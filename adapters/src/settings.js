// @ts-check
import { existsSync, readFileSync } from "./builtins.js"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { readJson, writeJsonPrivate } from "./json-file.js"

/**
 * @typedef {object} Settings
 * @property {string | undefined} url            the service's base URL (https://…), without /engine/v1
 * @property {string | undefined} license_key    lic_…
 * @property {"open" | "closed"} fail_mode       what a hook does when no verdict can be had
 * @property {boolean} send_prompts              whether prompt text is sent (goal drift needs it)
 * @property {number} timeout_ms                 how long a hook waits for the verdict
 * @property {string | undefined} project_id     sent with every signal when set
 * @property {string | undefined} [fingerprint_key]  the key of secrets' fingerprints (else one per install)
 */

/** The adapter's own folder: its settings (with the license key, mode 0600), spool and session state. */
export const adapterHome = (env = process.env) => env.SIGNAL_ENGINE_ADAPTER_HOME || join(env.HOME || homedir(), ".signal-engine")

export const settingsPath = (env = process.env) => join(adapterHome(env), "config.json")

export const defaultTimeoutMs = 3000

/** The settings file, with SIGNAL_ENGINE_* variables on top (so one shell or CI job can differ). */
export const loadSettings = (env = process.env) => {
  const file = /** @type {Record<string, unknown>} */ (readJson(settingsPath(env)) ?? {})
  const str = (/** @type {unknown} */ v) => (typeof v === "string" && v.length > 0 ? v : undefined)
  const failMode = str(env.SIGNAL_ENGINE_FAIL_MODE) ?? str(file.fail_mode)
  const prompts = str(env.SIGNAL_ENGINE_SEND_PROMPTS) ?? file.send_prompts
  const timeout = Number(str(env.SIGNAL_ENGINE_TIMEOUT_MS) ?? file.timeout_ms)
  /** @type {Settings} */
  const settings = {
    url: (str(env.SIGNAL_ENGINE_URL) ?? str(file.url))?.replace(/\/+$/, ""),
    license_key: str(env.SIGNAL_ENGINE_LICENSE_KEY) ?? str(file.license_key),
    fail_mode: failMode === "closed" ? "closed" : "open",
    send_prompts: prompts === true || prompts === "true" || prompts === "1",
    timeout_ms: Number.isFinite(timeout) && timeout > 0 ? timeout : defaultTimeoutMs,
    project_id: str(env.SIGNAL_ENGINE_PROJECT_ID) ?? str(file.project_id),
    fingerprint_key: str(env.SIGNAL_ENGINE_FINGERPRINT_KEY) ?? str(file.fingerprint_key)
  }
  return settings
}

/** Merges `changes` into the settings file (created 0600: it holds the license key). */
export const saveSettings = (/** @type {Record<string, unknown>} */ changes, env = process.env) => {
  const path = settingsPath(env)
  const current = /** @type {Record<string, unknown>} */ (readJson(path) ?? {})
  const next = { ...current }
  for (const [k, v] of Object.entries(changes)) if (v !== undefined) next[k] = v
  writeJsonPrivate(path, next)
  return path
}

/**
 * The project a repository belongs to: `project_id` in the nearest `.signal-engine.json` from the
 * tool's working folder up, else the settings' (a team commits the file once per repository).
 */
export const projectIdFor = (/** @type {string | undefined} */ cwd, /** @type {Settings} */ settings) => {
  let dir = cwd
  for (let i = 0; dir && i < 64; i++) {
    const file = join(dir, ".signal-engine.json")
    if (existsSync(file)) {
      try {
        const value = JSON.parse(readFileSync(file, "utf8")).project_id
        if (typeof value === "string" && value.length > 0) return value
      } catch {
        // A broken project file is the repository's problem; the signal still goes out.
      }
      break
    }
    const up = dirname(dir)
    if (up === dir) break
    dir = up
  }
  return settings.project_id
}
