// @ts-check
import { join } from "node:path"
import { readJson, writeJsonPrivate } from "./json-file.js"
import { adapterHome } from "./settings.js"

/**
 * A small JSON record per tool session (how far its transcript was read, the model it runs), kept
 * between hook runs: each hook is a new process.
 */
export const sessionState = {
  path: (/** @type {string} */ tool, /** @type {string} */ sessionId, env = process.env) =>
    join(adapterHome(env), "sessions", `${tool}-${fileNameOf(sessionId)}.json`),
  read: (
    /** @type {string} */ tool,
    /** @type {string} */ sessionId,
    env = process.env
  ) => /** @type {Record<string, any>} */ (safeRead(sessionState.path(tool, sessionId, env)) ?? {}),
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

/** A session id as a file name: itself where it is one already (UUIDs are), else a safe spelling with a hash. */
const fileNameOf = (/** @type {string} */ id) => {
  if (/^[\w.-]{1,100}$/.test(id) && !id.startsWith(".")) return id
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193) >>> 0
  return `${id.replace(/[^\w-]/g, "_").slice(0, 60)}-${h.toString(16)}`
}
