/** The light suffix stemmer the goal-drift detector's words go through (drift-words.ts, drift-thesaurus.ts). */
// Not "-er": it would make a header a head and a worker work.
const suffixes = ["ations", "ation", "ings", "ing", "ment", "ness", "ions", "ion", "ies", "ed", "es", "ly", "s"]

export const stem = (word: string): string => {
  for (const suffix of suffixes) {
    if (word.length - suffix.length >= 3 && word.endsWith(suffix)) {
      return suffix === "ies" ? `${word.slice(0, -3)}y` : word.slice(0, -suffix.length)
    }
  }
  return word
}
