// @ts-check

/**
 * Takes the secrets found out of what a signal sends: each occurrence becomes `[REDACTED:kind]`
 * in every string of the metadata (a command, a clipped tool input, a prompt sent with
 * --send-prompts). A string the adapter clipped (ending in `…`) may end in the first part of a
 * secret; that part goes too.
 */
/** @type {(value: unknown, found: { kind: string, secret: string }[]) => unknown} */
export const redactValue = (value, found) => {
  if (found.length === 0) return value
  if (typeof value === "string") return redactText(value, found)
  if (Array.isArray(value)) return value.map((v) => redactValue(v, found))
  if (value !== null && typeof value === "object") {
    /** @type {Record<string, unknown>} */
    const out = {}
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v, found)
    return out
  }
  return value
}

const ellipsis = "…"

export const redactText = (/** @type {string} */ text, /** @type {{ kind: string, secret: string }[]} */ found) => {
  let out = text
  // Longest first, so a secret inside another (a key inside a connection string) leaves no part.
  for (const { kind, secret } of [...found].sort((a, b) => b.secret.length - a.secret.length)) {
    out = out.split(secret).join(`[REDACTED:${kind}]`)
  }
  if (!out.endsWith(ellipsis)) return out
  const body = out.slice(0, -ellipsis.length)
  for (const { kind, secret } of found) {
    for (let n = Math.min(secret.length - 1, body.length); n >= 4; n--) {
      if (body.endsWith(secret.slice(0, n))) return `${body.slice(0, -n)}[REDACTED:${kind}]${ellipsis}`
    }
  }
  return out
}
