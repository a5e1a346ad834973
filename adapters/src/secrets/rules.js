// @ts-check
import { readFileSync } from "../builtins.js"
import { RE2JS } from "re2js"

/**
 * The detectors: gitleaks' published rules as data (gitleaks-rules.json, converted by
 * scripts/secret-rules.py), matched with re2js, a port of RE2: linear in the text for every
 * pattern, so no rule and no text can make a hook take super-linear time. Compiling all ~220
 * patterns costs ~150 ms, so a pattern is compiled the first time one of its keywords occurs in a
 * text (a hook seldom needs more than a few), and kept for the resident hook process.
 *
 * @typedef {object} RuleData
 * @property {string} id
 * @property {string} regex
 * @property {string[]} keywords  lowercase; the rule is tried only on text containing one
 * @property {number} [secretGroup]
 * @property {number} [entropy]  the least Shannon entropy (bits a character) of the secret
 * @property {{ target: "secret" | "match" | "line", regexes?: string[], stopwords?: string[] }[]} [allowlists]
 *
 * @typedef {object} Rule
 * @property {string} id
 * @property {string} kind  the finding kind: the gitleaks id in snake case (`aws_access_token`)
 * @property {() => RE2JS} pattern
 * @property {number | undefined} secretGroup
 * @property {number | undefined} entropy
 * @property {{ target: string, regexes: (() => RE2JS)[], stopwords: string[] }[]} allowlists
 * @property {number} reach  how far past a keyword's start a match of the rule can end
 * @property {number} before  how far ahead of its keyword a match of the rule can start
 */

const lazy = (/** @type {string} */ source) => {
  /** @type {RE2JS | undefined} */
  let compiled
  return () => (compiled ??= RE2JS.compile(source))
}

/** Patterns whose match can run over lines (a PEM block, a curl command continued, a YAML secret). */
const spansLines = (/** @type {string} */ regex) => /\\s\\S|\[\\r\\n\]|\(\?s[:)]|\\n/.test(regex)

/** The largest bound of the pattern's repetitions (`{10,150}`: 150): what one match can span, roughly. */
const longestRun = (/** @type {string} */ regex) => Math.max(0, ...[...regex.matchAll(/\{(\d+)(?:,(\d+))?\}/g)].map((m) => Number(m[2] ?? m[1])))

/**
 * How far ahead of its keyword a match can start: gitleaks' assignment-style rules allow 50
 * characters of name ahead of it (64); a pattern that names every keyword in its first 40
 * characters starts about there (16); any other (an OpenAI key's keyword is in its middle), 256.
 */
const beforeKeyword = (/** @type {RuleData} */ r) => {
  if (/^(?:\(\?i\))?\[\\w\.-\]\{0,50\}\?/.test(r.regex)) return 64
  const head = r.regex.replaceAll("\\", "").toLowerCase().slice(0, 40)
  return r.keywords.length > 0 && r.keywords.every((k) => head.includes(k)) ? 16 : 256
}

const data = /** @type {{ source: string, allowlist: { regexes: string[], stopwords: string[] }, rules: RuleData[] }} */ (
  JSON.parse(readFileSync(new URL("./gitleaks-rules.json", import.meta.url), "utf8"))
)

export const rulesSource = data.source

/** @type {Rule[]} */
export const rules = data.rules.map((r) => ({
  id: r.id,
  kind: r.id.replace(/[^a-z0-9]+/gi, "_").toLowerCase(),
  pattern: lazy(r.regex),
  secretGroup: r.secretGroup,
  entropy: r.entropy,
  allowlists: (r.allowlists ?? []).map((a) => ({ target: a.target, regexes: (a.regexes ?? []).map(lazy), stopwords: a.stopwords ?? [] })),
  reach: spansLines(r.regex) ? 16_384 : Math.max(256, 2 * longestRun(r.regex) + 64),
  before: beforeKeyword(r)
}))

/** The allowlist every rule shares: placeholders (`${VAR}`, `{{ x }}`), paths, repeated letters. */
export const globalAllowlist = { regexes: data.allowlist.regexes.map(lazy), stopwords: data.allowlist.stopwords }

/** Every kind the rules can report, for documentation and rule validation. */
export const kinds = [...new Set(rules.map((r) => r.kind))]

const byKeyword = new Map()
for (const [i, r] of data.rules.entries()) {
  for (const k of r.keywords) byKeyword.set(k, [...(byKeyword.get(k) ?? []), rules[i]])
}

const escape = (/** @type {string} */ s) => s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&")

/**
 * One alternation of every keyword (literal strings, no quantifier: it cannot backtrack beyond
 * the longest keyword at each position), run once over the lowercased text.
 */
const keywordPattern = new RegExp([...byKeyword.keys()].sort((a, b) => b.length - a.length).map(escape).join("|"), "g")

/**
 * Where a rule whose keywords are common in ordinary text can match, as a necessary condition of
 * its pattern that V8 checks fast (re2js runs ~0.5 µs a character, too slow over every line naming
 * a key or token): for the generic rule a keyword, then up to 20 name characters and 3 quotes, an
 * assignment, up to 5 quotes or spaces and 10 value characters; for the others the start of the
 * match. Every quantifier is bounded and nothing nests, so V8's backtracking is bounded at each
 * place; re2js then judges the stretch around each place (`before` ahead, `reach` after).
 */
const anchors = /** @type {Record<string, { pattern: RegExp, before: number, reach?: number }>} */ ({
  "generic-api-key": {
    pattern: /(?:access|auth|api|credential|creds|key|passw(?:or)?d|secret|token)[ \t\w.-]{0,20}[\s'"]{0,3}(?:=|>|:|,|\|\||\?=)[`'"\s=]{0,5}[\w.=+/-]{10}/gi,
    before: 64,
    reach: 256
  },
  "vault-service-token": { pattern: /\b(?:hvs\.[\w-]{90}|s\.[a-z0-9]{24})/gi, before: 0 },
  "jwt": { pattern: /\bey[a-zA-Z0-9]{17}/g, before: 0 },
  "twilio-api-key": { pattern: /SK[0-9a-fA-F]{32}/g, before: 0 }
})

/** Stretches of `reach` after (and `before` ahead of) each place, merged; places ascending. */
const stretchesAt = (/** @type {number[]} */ places, /** @type {number} */ reach, /** @type {number} */ length, /** @type {number} */ before) => {
  /** @type {[number, number][]} */
  const stretches = []
  for (const at of places) {
    const from = Math.max(0, at - before)
    const to = Math.min(length, at + reach)
    const last = stretches[stretches.length - 1]
    if (last && from <= last[1]) last[1] = Math.max(last[1], to)
    else stretches.push([from, to])
  }
  return stretches
}

/**
 * The rules whose keywords occur in `text`, each with the stretches of the text where it can
 * match: from the rule's `before` ahead of a keyword (the generic rule's anchor, 64: it allows 50)
 * to its reach after it. A keyword inside another that matched at an
 * earlier place is not seen (the alternation does not overlap); the other's stretch covers it.
 */
export const candidateRules = (/** @type {string} */ text) => {
  /** @type {Map<string, number[]>} */
  const places = new Map()
  keywordPattern.lastIndex = 0
  for (const m of text.toLowerCase().matchAll(keywordPattern)) {
    const list = places.get(m[0])
    if (list) list.push(m.index)
    else places.set(m[0], [m.index])
  }
  /** @type {Map<Rule, number[]>} */
  const byRule = new Map()
  for (const [keyword, at] of places) {
    for (const r of byKeyword.get(keyword)) byRule.set(r, [...(byRule.get(r) ?? []), ...at])
  }
  return [...byRule].map(([rule, at]) => {
    const anchor = anchors[rule.id]
    if (!anchor) return { rule, stretches: stretchesAt(at.sort((a, b) => a - b), rule.reach, text.length, rule.before) }
    anchor.pattern.lastIndex = 0
    const where = [...text.matchAll(anchor.pattern)].map((m) => m.index)
    return { rule, stretches: stretchesAt(where, anchor.reach ?? rule.reach, text.length, anchor.before) }
  })
}
