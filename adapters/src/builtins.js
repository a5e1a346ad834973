// @ts-check
import { createRequire } from "node:module"

/**
 * Node's own modules as CommonJS exports, not ESM namespaces: `import … from "node:fs"` reads
 * every export, and the lazy ones (fs.promises, the streams, the watchers) load ~34 internal
 * modules, readline among them, that a hook never uses (node:http's, ~10 more). Node >= 20.16 has
 * process.getBuiltinModule; before it, require.
 */
export const builtin = /** @type {(id: string) => any} */ (process.getBuiltinModule ?? createRequire(import.meta.url))

/** @type {typeof import("node:fs")} */
const fs = builtin("node:fs")

export const {
  chmodSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, readSync,
  renameSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync
} = fs
