// @ts-check
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "./builtins.js"
import { dirname } from "node:path"

/** A JSON file's value, or undefined when it does not exist. Throws when it exists but is not JSON. */
export const readJson = (/** @type {string} */ path) => {
  let text
  try {
    text = readFileSync(path, "utf8")
  } catch (e) {
    if (/** @type {NodeJS.ErrnoException} */ (e).code === "ENOENT") return undefined
    throw e
  }
  if (text.trim() === "") return undefined
  return JSON.parse(text)
}

/** Writes through a temporary file and a rename, so a tool never reads half a config. */
export const writeJson = (/** @type {string} */ path, /** @type {unknown} */ value, mode = 0o644) => {
  mkdirSync(dirname(path), { recursive: true })
  const tmp = `${path}.${process.pid}.tmp`
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode })
  renameSync(tmp, path)
}

export const writeJsonPrivate = (/** @type {string} */ path, /** @type {unknown} */ value) => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  writeJson(path, value, 0o600)
  chmodSync(path, 0o600)
}
