/**
 * Goal drift, method `lexical-1`: the detector of records accepted before `context-2` (drift.ts),
 * kept so that replaying them derives what was derived live. A deterministic lexical similarity
 * between a prompt and the user's active goals.
 *
 * Method: both texts become sets of terms (lower-cased letters and digits, words of three or more
 * characters, English stop words dropped, a light suffix stemmer); two terms match when equal or
 * when one is a prefix of the other and the shorter has at least four characters ("auth" and
 * "authentication"). The score is the overlap coefficient: matched terms / the size of the smaller
 * set, in [0, 1]. A prompt is on-goal when its best score over the active goals reaches the
 * threshold (default 0.2), off-goal otherwise; a text without terms is not judged.
 */
const stopWords = new Set([
  "the",
  "and",
  "for",
  "that",
  "this",
  "with",
  "from",
  "into",
  "onto",
  "are",
  "was",
  "were",
  "been",
  "being",
  "have",
  "has",
  "had",
  "does",
  "did",
  "doing",
  "can",
  "could",
  "should",
  "would",
  "will",
  "shall",
  "may",
  "might",
  "must",
  "not",
  "but",
  "you",
  "your",
  "yours",
  "our",
  "ours",
  "their",
  "them",
  "they",
  "its",
  "his",
  "her",
  "she",
  "him",
  "who",
  "whom",
  "what",
  "which",
  "when",
  "where",
  "why",
  "how",
  "all",
  "any",
  "some",
  "each",
  "more",
  "most",
  "other",
  "such",
  "only",
  "own",
  "same",
  "than",
  "too",
  "very",
  "just",
  "also",
  "then",
  "there",
  "here",
  "about",
  "above",
  "below",
  "over",
  "under",
  "again",
  "once",
  "out",
  "off",
  "now",
  "let",
  "lets",
  "please",
  "make",
  "sure",
  "need",
  "want",
  "use",
  "using",
  "like",
  "get",
  "got",
  "one",
  "two",
  "new",
  "add",
  "via",
  "per",
  "yes",
  "okay"
])

const suffixes = ["ations", "ation", "ings", "ing", "ment", "ness", "ions", "ion", "ies", "ers", "er", "ed", "es", "ly", "s"]

const stem = (word: string): string => {
  for (const suffix of suffixes) {
    if (word.length - suffix.length >= 3 && word.endsWith(suffix)) {
      return suffix === "ies" ? `${word.slice(0, -3)}y` : word.slice(0, -suffix.length)
    }
  }
  return word
}

/** The distinct terms of a text. */
export const terms = (text: string): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const word of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (word.length < 3 || stopWords.has(word)) continue
    out.add(stem(word))
  }
  return [...out]
}

const matches = (a: string, b: string): boolean => {
  if (a === b) return true
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  return short.length >= 4 && long.startsWith(short)
}

/** The overlap coefficient of two term sets, in [0, 1]; 0 when either is empty. */
export const similarity = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  if (a.length === 0 || b.length === 0) return 0
  const [small, large] = a.length <= b.length ? [a, b] : [b, a]
  let matched = 0
  for (const term of small) if (large.some((other) => matches(term, other))) matched++
  return Math.round((matched / small.length) * 1000) / 1000
}

export interface DriftSettings {
  /** A prompt whose best score is below this is off-goal. */
  readonly threshold: number
  /** How many consecutive off-goal prompts make a drift. */
  readonly prompts: number
}

export const defaultDriftSettings: DriftSettings = { threshold: 0.2, prompts: 3 }

/** The best-matching goal of a text, or undefined when the text has no terms or there is no goal. */
export const bestGoal = (
  text: string,
  goals: ReadonlyArray<{ readonly id: string; readonly description: string }>
): { readonly goalId: string; readonly score: number } | undefined => {
  const prompt = terms(text)
  if (prompt.length === 0 || goals.length === 0) return undefined
  let best: { goalId: string; score: number } | undefined
  for (const goal of goals) {
    const score = similarity(prompt, terms(goal.description))
    if (best === undefined || score > best.score) best = { goalId: goal.id, score }
  }
  return best
}
