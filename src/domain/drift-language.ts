import { boundedMemo } from "./bounded-memo.ts"
import { rawWords } from "./drift-words.ts"

/**
 * Which language a prompt or a goal is written in, as far as goal drift needs to know: the
 * detector's words and thesaurus are English, so a prompt in another language than its goal's
 * cannot be judged by them (from context-6 it is a follow-up). Told by script (most letters not
 * Latin) or by function words, which every sentence of a language has and no identifier is: at
 * least three of one other language's, and more than of English's. Words shared by several of
 * these languages or with English ("de", "la", "in", "is", "per") are left out.
 */
const functionWords: Readonly<Record<string, string>> = {
  en: "the and not with this that why how what when but also you we please can could should would does is are was of to for",
  de: "der die das und ist nicht ein eine einen einem einer mit von zu auf für dem des im bei noch nochmal warum wie was wenn aber auch " +
    "schreib lass mach bitte kannst ich wir sich oder nur jetzt dann hier gibt wird werden sind habe hat dort dir mir " +
    "mich uns gleiche nimm füge schau welche sehr etwas anderes beide über manche eigentlich zieh",
  es: "el los las es un una con del en por para qué cómo cuando pero también haz puedes yo nosotros esto esta este " +
    "otra otro ahora luego aquí hay sin sobre hazlo la y se le mi su otras mismo misma vuelve muy cada dónde",
  fr: "la le les et est pas une avec du des pour qui pourquoi comment quand mais aussi fais peux je nous cette ce cet encore " +
    "maintenant ici sans sur",
  pt: "os um uma em para por porque como quando mas também faça pode você eu nós isso esta este agora aqui sem sobre",
  it: "la il lo gli una con del della per che perché come quando ma anche fai puoi io noi questo questa ora qui senza sopra",
  nl: "het een en niet met van voor op dat die waarom hoe wanneer maar ook kun ik wij nu hier zonder over"
}

/** Each function word's languages. */
const languagesOf = new Map<string, Array<string>>()
for (const [language, words] of Object.entries(functionWords)) {
  for (const w of new Set(words.split(" "))) languagesOf.set(w, [...(languagesOf.get(w) ?? []), language])
}

const letters = /\p{L}/gu
const latinLetters = /\p{Script=Latin}/gu

/** The language of a text: a language code, "other-script", or undefined when it cannot tell. */
export const languageOf = (text: string): string | undefined => {
  const all = text.match(letters)?.length ?? 0
  if (all > 0 && (text.match(latinLetters)?.length ?? 0) * 2 < all) return "other-script"
  const counts = new Map<string, number>()
  for (const word of rawWords(text)) for (const language of languagesOf.get(word) ?? []) counts.set(language, (counts.get(language) ?? 0) + 1)
  const english = counts.get("en") ?? 0
  let best: string | undefined
  let most = 0
  for (const [language, n] of counts) if (language !== "en" && n > most) [best, most] = [language, n]
  if (best !== undefined && most >= 3 && most > english) return best
  return english > 0 ? "en" : undefined
}

const goalLanguage = boundedMemo(languageOf)

/**
 * Whether a prompt is written in another language than the goals: a language other than English
 * that no active goal is written in (a goal whose language cannot be told counts as English).
 */
export const inAnotherLanguage = (prompt: string, goals: ReadonlyArray<{ readonly description: string }>): boolean => {
  const language = languageOf(prompt)
  if (language === undefined || language === "en") return false
  return !goals.some((g) => goalLanguage(g.description) === language)
}
