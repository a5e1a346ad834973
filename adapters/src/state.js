// @ts-check
import { createHash } from "node:crypto"
import { join } from "node:path"
import { readJson, writeJsonPrivate } from "./json-file.js"
import { adapterHome } from "./settings.js"

/**
 * A small JSON record per tool session (how far its transcript was read, the model it runs), kept
 * between hook runs: each hook is a new process.
 */
export const sessionState = {
  path: (/** @type {string} */ tool, /** @type {string} */ sessionId, env = process.env) =>
    join(adapterHome(env), "sessions", `${tool}-${createHash("sha256").update(sessionId).digest("hex").slice(0, 32)}.json`),
  read: (/** @type {string} */ tool, /** @type {string} */ sessionId, env = process.env) =>
    /** @type {Record<string, any>} */ (safeRead(sessionState.path(tool, sessionId, env)) ?? {}),
  write: (/** @type {string} */ tool, /** @type {string} */ sessionId, /** @type {Record<string, any>} */ value, env = process.env) =>
    writeJsonPrivate(sessionState.path(tool, sessionId, env), value)
}

const safeRead = (/** @type {string} */ path) => {
  try {
    return readJson(path)
  } catch {
    return undefined
  }
}
