import { stem } from "./drift-stem.ts"
import { conceptsOf, phraseConcepts } from "./drift-thesaurus.ts"

/**
 * The words of a prompt, a goal or a tool call, as the goal-drift detector (drift.ts) compares
 * them: identifiers and paths split into words (`getUserById`, `src/auth/session.ts`), a hyphen or
 * underscore compound also joined (`sign-in` → `signin`), English function words dropped, a light
 * suffix stemmer, and each word's concepts from the software thesaurus (drift-thesaurus.ts).
 */

const stopWords = new Set(
  `
a an the and or but nor if so as at by for from in into on onto of off out over under up down to too via per with without
is am are was were be been being do does did doing done have has had having can could should would will shall may might must
i im ive id me my mine we us our ours you your yours he him his she her hers they them their theirs it its itself this that these those
what which who whom whose when where why how all any some each every both either neither more most other such only own same than
very just also then there here about above below again once now let lets please pls thanks thank ok okay yes yeah yep nope no not
sure maybe really actually like get got gets getting one two three four five six seven eight nine ten first second third last next
thing things stuff way bit lot lots kind sort much many few still even ever never always already yet instead whichever whatever
hey hi hmm ugh wait well right oh ah cool nice great good fine awesome looks look looking seems seem see saw
before after during while until since around back forward across along behind beside between beyond inside outside within
doesn isn aren wasn won didn shouldn couldn wouldn haven hasn don ll re ve`.trim().split(/\s+/)
)

/**
 * Words of any coding task: evidence of nothing in particular, whichever goal. They weigh little
 * both ways: "run the tests" is neither on- nor off-goal by itself (a follow-up, judged by what
 * came before it).
 */
const generic = new Set(
  `
fix fixes fixed fixing bug bugs issue issues problem problems error errors add adds added adding make makes made making
change changes changed update updates updated remove removes removed create creates created write writes wrote written
run runs ran rerun test tests tested testing spec specs check checks checked try tried use used uses using need needs want
work works worked working code file files folder function functions method methods class classes value values step steps
build builds built set setup put keep kept show tell give find found know think mean means go going went come comes start
commit commits push pushed pull merge branch diff patch pr prs review repo src lib dist app apps page pages service services
api endpoint data user users team new old line lines part parts case cases version field fields list item items name names
help question idea ideas quick quickly sorry something anything everything nothing someone anyone people time times day days
week weeks month months year years today tomorrow yesterday tonight morning evening monday tuesday wednesday thursday friday
saturday sunday second seconds later soon earlier able allow allowed switch switching gear gears
hand hands care cares ask asked asking say said call called place places point points number numbers lot kind sure real really
whole full half small big large little long short high low right left top bottom side end begin beginning start started stop
open close closed turn turned bring take taken send sent read reads save saved load loaded happen happens happened break breaks
broken fail fails failed failing pass passes passed wrong correct proper properly simple simpler easy hard better best worse
same different similar other else another each every all most more less least many much few enough own whole away
return returns returned thing things problem problems instead option options approach way ways also yet
message messages description screenshot screenshots changelog tag tags bump lint linter format formatting typecheck warning warnings
npm npx yarn pnpm pip uv cargo gradle gradlew mvn mvnw maven bundle exec node python python3 go git gh make tsx ts js jsx mjs
cjs py rb kt java swift rs json md txt html css sh bash cd ls cat grep sed echo sudo tail head home dev
main index test_ tmp var etc usr opt`.trim().split(/\s+/)
)

/** Whether two stems are the same word: equal, or one a prefix (of at least five letters) of the other. */
export const sameWord = (a: string, b: string): boolean => {
  if (a === b) return true
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  return short.length >= 5 && long.startsWith(short)
}

export interface Word {
  readonly stem: string
  /** 1 for a specific word, less for a generic one. */
  readonly weight: number
  readonly concepts: ReadonlyArray<number>
}

export const genericWeight = 0.1

/** The raw lower-case words of a text, identifiers split (`getUserById` → get user by id). */
export const rawWords = (text: string): ReadonlyArray<string> =>
  text.replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2").replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2").toLowerCase()
    .split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)

const compounds = /\p{L}{2,}[-_]\p{L}{2,}/gu
const versions = /\bv?\d+\.\d+(?:\.\d+)?\b/gu
const identifiers = /\p{L}+\p{Ll}\p{Lu}[\p{L}\p{N}]*/gu

/** The words of a text that carry meaning, each once, in order of first appearance. */
export const words = (text: string): ReadonlyArray<Word> => {
  const raw = rawWords(text)
  const out: Array<Word> = []
  const seen = new Set<string>()
  const push = (stemmed: string, concepts: ReadonlyArray<number>, weight: number) => {
    if (seen.has(stemmed)) return
    seen.add(stemmed)
    out.push({ stem: stemmed, weight, concepts })
  }
  // A version ("2.0", "v3.12") names a release: the same one in a goal and a prompt.
  for (const version of text.toLowerCase().match(versions) ?? []) push(version.replace(/^v/, ""), [], 1)
  for (let i = 0; i < raw.length; i++) {
    const word = raw[i]!
    const next = raw[i + 1]
    if (next !== undefined) {
      // A phrase stands for its two words ("sign in", "event bus").
      const phrase = phraseConcepts(`${stem(word)} ${stem(next)}`)
      if (phrase.length > 0) {
        push(`${stem(word)}_${stem(next)}`, phrase, 1)
        i++
        continue
      }
    }
    if (stopWords.has(word) || /^\d+$/.test(word)) continue
    const stemmed = stem(word)
    const concepts = conceptsOf(stemmed)
    if (word.length < 3 && concepts.length === 0) continue
    push(stemmed, concepts, generic.has(word) || generic.has(stemmed) ? genericWeight : 1)
  }
  // A compound or an identifier the thesaurus knows whole ("sign-in", "RabbitMQ") is also that word.
  for (const whole of [...(text.toLowerCase().match(compounds) ?? []), ...(text.match(identifiers) ?? [])]) {
    const joined = stem(whole.toLowerCase().replace(/[-_]/, ""))
    const concepts = conceptsOf(joined)
    if (concepts.length > 0) push(joined, concepts, 1)
  }
  return out
}

/**
 * Words that make a short prompt a follow-up of what came before ("use NFKC there", "make it
 * shorter", "now the week view"): such a prompt continues the thread it is in.
 */
const continuations = new Set("it its them those these there same again too instead now still both".split(" "))
/** Words that continue the thread when a prompt opens with them ("and a badge for it", "now the week view"). */
const openers = new Set("and also now then but or plus".split(" "))

export const continues = (text: string): boolean => {
  const raw = rawWords(text)
  return (raw.length > 0 && openers.has(raw[0]!)) || raw.some((w) => continuations.has(w))
}

/** Phrases that say the user turns to something else ("switching gears", "unrelated, but"). */
const switchMarkers =
  /\b(switching gears|switching to|new topic|different (thing|topic|task)|(totally |completely )?unrelated|another thing|before i forget|by the way|btw|next up|side note|change of plans?|forget (about )?(the|that|this)\b)/

export const switchesTopic = (text: string): boolean => switchMarkers.test(text.toLowerCase())

/** Programs developers run from a prompt as they would in a shell ("pytest -x", "cargo test"). */
const programs = new Set(
  `npm npx yarn pnpm node deno bun tsc eslint prettier vitest jest mocha playwright cypress pytest tox ruff mypy
black flake8 pip pip3 uv poetry python python3 cargo rustc rustup go gofmt make cmake gradle gradlew mvn mvnw dotnet git gh docker
kubectl helm terraform ansible aws gcloud az curl wget act stripe dbt psql mysql snowsql sqlite3 redis-cli bundle rake rails rspec
composer php artisan swift xcodebuild pod flutter dart expo java javac sbt mix elixir`.trim().split(/\s+/)
)

/** Whether a prompt is a command line typed as the prompt: a follow-up of the work at hand. */
export const isCommand = (text: string): boolean => {
  const line = text.trim()
  if (line.includes("\n") || line.split(/\s+/).length > 10) return false
  const first = line.split(/\s+/)[0]!.toLowerCase()
  return first.startsWith("./") || programs.has(first) || /(^|\s)--?[a-z][\w-]*(=\S*)?(\s|$)/.test(line)
}
