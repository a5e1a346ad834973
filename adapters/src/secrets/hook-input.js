// @ts-check
import { scanCustom } from "./custom-patterns.js"
import { scanText } from "./scan.js"

/**
 * Scanning one hook input: every string in it (the prompt, each argument of a tool's input, what
 * the tool answered), named by where it is (`prompt`, `tool_input.command`,
 * `tool_response.stdout`). Bounded: at most `maxScanned` characters in all, taken in the
 * input's order; a string past that is not scanned and the result says so (`truncated`).
 *
 * @typedef {{ kind: string, where: string, secret: string }} Found
 */

/** The most characters one hook scans (a tool output of 5 MB is scanned up to here). */
export const maxScanned = 1_048_576
/** Strings shorter than any secret a rule knows are skipped. */
const minLength = 8
const maxDepth = 32
const maxWhere = 200

/** Keys of a hook input that are the tool's own bookkeeping, never content. */
const bookkeeping = new Set(["session_id", "transcript_path", "hook_event_name", "cwd", "tool_use_id", "permission_mode", "model"])

export const scanHookInput = (/** @type {unknown} */ input, /** @type {import("./custom-patterns.js").CustomPattern[]} */ custom = []) => {
  /** @type {Found[]} */
  const found = []
  let budget = maxScanned
  let truncated = false
  const walk = (/** @type {unknown} */ value, /** @type {string} */ where, /** @type {number} */ depth) => {
    if (typeof value === "string") {
      if (value.length < minLength) return
      if (budget <= 0) {
        truncated = true
        return
      }
      const text = value.length > budget ? value.slice(0, budget) : value
      if (text.length < value.length) truncated = true
      budget -= text.length
      for (const hit of [...scanText(text), ...scanCustom(text, custom)]) found.push({ kind: hit.kind, where: where.slice(0, maxWhere), secret: hit.secret })
      return
    }
    if (value === null || typeof value !== "object" || depth > maxDepth) return
    if (Array.isArray(value)) {
      value.forEach((v, i) => walk(v, `${where}[${i}]`, depth + 1))
      return
    }
    for (const [k, v] of Object.entries(value)) {
      if (depth === 0 && bookkeeping.has(k)) continue
      walk(v, where === "" ? k : `${where}.${k}`, depth + 1)
    }
  }
  walk(input, "", 0)
  return { found, truncated }
}
