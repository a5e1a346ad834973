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
  chmodSync,
  closeSync,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync
} = fs

/**
 * Closes the descriptors this process inherited beyond stdio (Linux): a process that outlives
 * the hook that started it (the resident hook process, a settle) would otherwise hold the tool's
 * pipes open, and whatever reads them (a shell pipeline, a CI log) would wait for it. Node's own
 * descriptors are all close-on-exec; the inherited ones are those without the flag.
 */
export const closeInherited = () => {
  let fds
  try {
    fds = readdirSync("/proc/self/fdinfo")
  } catch {
    return
  }
  for (const name of fds) {
    const fd = Number(name)
    if (!(fd > 2)) continue
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1]
      if (flags !== undefined && (parseInt(flags, 8) & 0o2000000) === 0) fs.closeSync(fd)
    } catch {
      // gone meanwhile
    }
  }
}
