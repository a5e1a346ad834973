// @ts-check
import { contextCandidates } from "./context.js"
import { candidateRules, globalAllowlist, rules } from "./rules.js"

/**
 * Finding secrets in text, as gitleaks does with its rules: a rule is tried where one of its
 * keywords occurs; the secret is its `secretGroup`, else the first group that matched, else the
 * whole match; it must reach the rule's entropy, and no allowlist (the rule's or the global one)
 * may take it back.
 *
 * @typedef {object} Hit  a secret in a text (kept on the machine: only its kind and fingerprint leave)
 * @property {string} kind
 * @property {string} secret
 * @property {number} start  where the secret starts in the text
 */

/** Shannon entropy in bits a character, as gitleaks computes it. */
export const entropy = (/** @type {string} */ s) => {
  if (s.length === 0) return 0
  /** @type {Map<string, number>} */
  const counts = new Map()
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1)
  let bits = 0
  for (const n of counts.values()) {
    const p = n / s.length
    bits -= p * Math.log2(p)
  }
  return bits
}

const lineAround = (/** @type {string} */ text, /** @type {number} */ start, /** @type {number} */ end) => {
  const from = text.lastIndexOf("\n", start - 1) + 1
  const to = text.indexOf("\n", end)
  return text.slice(from, to < 0 ? text.length : to)
}

const allowed = (
  /** @type {import("./rules.js").Rule} */ rule,
  /** @type {{ secret: string, match: string, line: () => string }} */ found
) => {
  const lowerSecret = found.secret.toLowerCase()
  if (globalAllowlist.stopwords.some((w) => lowerSecret.includes(w))) return true
  if (globalAllowlist.regexes.some((p) => p().matcher(found.secret).find())) return true
  for (const a of rule.allowlists) {
    if (a.stopwords.some((w) => lowerSecret.includes(w))) return true
    const target = a.target === "match" ? found.match : a.target === "line" ? found.line() : found.secret
    if (a.regexes.some((p) => p().matcher(target).find())) return true
  }
  return false
}

/** The secret of one match: the rule's group, else the first group that matched, else the match. */
const secretOf = (/** @type {import("re2js").Matcher} */ m, /** @type {number | undefined} */ group) => {
  if (group !== undefined) return { secret: m.group(group) ?? "", start: m.start(group) }
  for (let g = 1; g <= m.groupCount(); g++) {
    const s = m.group(g)
    if (s) return { secret: s, start: m.start(g) }
  }
  return { secret: m.group() ?? "", start: m.start() }
}

/** The secrets in `text`, by rule, then place; only the stretches around the rules' keywords are matched. */
export const scanText = (/** @type {string} */ text) => {
  /** @type {Hit[]} */
  const hits = []
  for (const { rule, stretches } of candidateRules(text)) {
    for (const [from, to] of stretches) scanStretch(rule, text, from, text.slice(from, to), hits)
  }
  return withoutGenericOverlaps(withContextHits(text, hits))
}

const generic = rules.find((r) => r.kind === "generic_api_key")

/**
 * The passwords named in prose or sent as `Bearer` (context.js), as generic_api_key findings where
 * no finding covers them yet, held to the generic rule's entropy and allowlists.
 */
const withContextHits = (/** @type {string} */ text, /** @type {Hit[]} */ hits) => {
  if (!generic) return hits
  for (const c of contextCandidates(text)) {
    if (hits.some((h) => h.start < c.start + c.secret.length && c.start < h.start + h.secret.length)) continue
    if (generic.entropy !== undefined && entropy(c.secret) < generic.entropy) continue
    if (allowed(generic, { secret: c.secret, match: c.match, line: () => lineAround(text, c.start, c.start + c.secret.length) })) continue
    hits.push({ kind: "generic_api_key", secret: c.secret, start: c.start })
  }
  return hits
}

/**
 * As gitleaks does: a generic finding over a secret a specific rule also found (`TOKEN=ghp_…`) is
 * the same secret, reported once, by its specific kind.
 */
const withoutGenericOverlaps = (/** @type {Hit[]} */ hits) => {
  const specific = hits.filter((h) => h.kind !== "generic_api_key")
  if (specific.length === hits.length) return hits
  const overlaps = (/** @type {Hit} */ a, /** @type {Hit} */ b) => a.start < b.start + b.secret.length && b.start < a.start + a.secret.length
  return hits.filter((h) => h.kind !== "generic_api_key" || !specific.some((s) => overlaps(h, s)))
}

const scanStretch = (
  /** @type {import("./rules.js").Rule} */ rule,
  /** @type {string} */ text,
  /** @type {number} */ offset,
  /** @type {string} */ stretch,
  /** @type {Hit[]} */ hits
) => {
  const m = rule.pattern().matcher(stretch)
  let from = 0
  while (from <= stretch.length && m.find(from)) {
    const end = m.end()
    from = end > m.start() ? end : end + 1
    const { secret, start } = secretOf(m, rule.secretGroup)
    if (secret.length === 0) continue
    if (rule.entropy !== undefined && entropy(secret) < rule.entropy) continue
    const match = m.group() ?? ""
    if (allowed(rule, { secret, match, line: () => lineAround(text, offset + m.start(), offset + end) })) continue
    hits.push({ kind: rule.kind, secret, start: offset + start })
  }
}
