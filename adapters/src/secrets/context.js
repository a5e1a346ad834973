// @ts-check

/**
 * Passwords gitleaks' generic rule misses because no assignment precedes them: one named in prose
 * ("my DB_PASSWORD is …", "use this key for the test: …"). Measured on the corpus
 * (docs/benchmarks.md "Secrets"): generic recall 0.61 → 0.83, no false positive. Tried and not
 * kept: `Bearer …` (the corpus's were found already, by gitleaks' curl rule) and entropy alone
 * (3.6% false positives: base64 fixtures, integrity hashes).
 *
 * The candidates are then held to the generic rule's entropy and allowlists (scan.js). Every
 * quantifier is bounded (a gap of 30 characters, up to 5 spaces, a token of 16–128), so a match
 * attempt at one place costs a bounded number of steps whatever the text.
 */
const named =
  /(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|credentials?|key)\b[^\n]{0,30}?(?:\bis\b|:|=)[ \t]{0,5}["']?([A-Za-z0-9+/_\-.~]{16,128})/gi

/** Letters of both cases and digits, as generated passwords and keys have (words and paths do not). */
const mixed = (/** @type {string} */ s) => /[a-z]/.test(s) && /[A-Z]/.test(s) && /[0-9]/.test(s)

/** @returns {{ secret: string, start: number, match: string }[]} */
export const contextCandidates = (/** @type {string} */ text) => {
  const out = []
  for (const m of text.matchAll(named)) {
    const secret = m[1] ?? ""
    if (!mixed(secret)) continue
    out.push({ secret, start: (m.index ?? 0) + m[0].length - secret.length, match: m[0] })
  }
  return out
}
