// @ts-check
import { exchange } from "./http1.js"

/**
 * @typedef {{ type: string, adapter?: string, session_id: string, metadata?: Record<string, unknown>, idempotency_key: string }} Signal
 *   `adapter` is set by runHook from the tool (a mapping need not repeat it).
 * @typedef {{ ok: boolean, signal_id?: string, session_id?: string, action?: string, message?: string,
 *   rule_id?: string, reason?: string, duplicate?: boolean, error?: { code: string, error: string },
 *   drift?: import("./goals.js").Drift }} Result
 * @typedef {{ kind: "answered", results: Result[] }
 *   | { kind: "rejected", status: number, code: string, error: string }
 *   | { kind: "unreachable", reason: string, blocked?: Result }} Outcome
 *   rejected: the service refused the request itself (bad key, bad input): sending it again cannot help.
 *   unreachable: no answer, a timeout, 5xx or 429: the signals may or may not be stored, so they are
 *   spooled and sent again under the same idempotency keys. `blocked`: a block (or redact) the service judged
 *   from a signal alone before it failed to record it (a 503's `verdicts`), enforced all the same.
 */

/**
 * A random UUID (v4) for an idempotency key: unique per signal is all a key needs, and
 * Math.random spares every hook loading node:crypto (a few ms of start-up per event).
 */
export const newKey = () => {
  const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16))
  hex[12] = "4"
  hex[16] = (8 + Math.floor(Math.random() * 4)).toString(16)
  const h = hex.join("")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/**
 * One request to the engine API, answered within `timeoutMs` or not at all.
 * @returns {Promise<{ status: number, body: any } | { status: 0, reason: string }>}
 */
export const request = async (
  /** @type {{ url: string, license_key: string }} */ target,
  /** @type {string} */ method,
  /** @type {string} */ path,
  /** @type {unknown} */ body,
  /** @type {number} */ timeoutMs,
  /** @type {Record<string, string>} */ headers = {}
) => {
  let url
  try {
    url = new URL(`${target.url}/engine/v1${path}`)
  } catch {
    return { status: 0, reason: `the service URL is not a URL: ${target.url}` }
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return { status: 0, reason: `the service URL is not http(s): ${target.url}` }
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const answer = await exchange(
    url,
    method,
    {
      authorization: `Bearer ${target.license_key}`,
      accept: "application/json",
      ...(payload === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    payload,
    timeoutMs
  )
  if (answer.status === 0) return answer
  const text = "body" in answer ? answer.body : ""
  let parsed
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    parsed = { error: text.slice(0, 200) }
  }
  return { status: answer.status, body: parsed }
}

const retryable = (/** @type {number} */ status) => status === 0 || status === 408 || status === 429 || status >= 500

/**
 * Sends signals: one through POST /signals (Idempotency-Key header), several as one batch.
 * @returns {Promise<Outcome>}
 */
export const sendSignals = async (
  /** @type {{ url: string, license_key: string }} */ target,
  /** @type {Signal[]} */ signals,
  /** @type {number} */ timeoutMs
) => {
  const one = signals.length === 1 ? signals[0] : undefined
  const answer = one
    ? await request(target, "POST", "/signals", strip(one), timeoutMs, { "idempotency-key": one.idempotency_key })
    : await request(target, "POST", "/signals/batch", { signals }, timeoutMs)
  if (answer.status === 0) return { kind: "unreachable", reason: "reason" in answer ? answer.reason : "no answer" }
  const body = "body" in answer ? answer.body : undefined
  if (retryable(answer.status)) {
    const reason = `HTTP ${answer.status}${body?.code ? ` ${body.code}` : ""}`
    const verdicts = Array.isArray(body?.verdicts) ? body.verdicts : []
    // A block first; a redact (which blocks where the tool cannot rewrite) otherwise.
    const blocked = verdicts.find((/** @type {any} */ v) => v?.ok === false && v.action === "block") ??
      verdicts.find((/** @type {any} */ v) => v?.ok === false && v.action === "redact")
    return blocked ? { kind: "unreachable", reason, blocked } : { kind: "unreachable", reason }
  }
  if (answer.status !== 200) {
    return { kind: "rejected", status: answer.status, code: String(body?.code ?? "error"), error: String(body?.error ?? "") }
  }
  return { kind: "answered", results: one ? [body] : (body?.results ?? []) }
}

const strip = (/** @type {Signal} */ s) => {
  const { idempotency_key: _key, ...signal } = s
  return signal
}
