import { boundedMemo } from "./bounded-memo.ts"
import { conceptsOf, phraseConcepts } from "./drift-thesaurus.ts"
import { continues, genericWeight, isCommand, sameWord, switchesTopic, type Word, words } from "./drift-words.ts"

/**
 * Goal drift, methods `context-2` to `context-7`: whether a prompt is part of the work on the
 * user's active goals. All judge alike; from context-3 the off-goal streak is kept per session
 * (drift-fold.ts), before one per user; from context-4 a drift answered as the goal's work
 * (`refocus-ack` with `on_goal`) teaches the context its words, from context-5 also those of the
 * prompts the answer names, however late it comes; from context-6 a thin goal (`isThin`: no task
 * named) takes the first prompts as its work until the context holds `warmUpWords` words; from
 * context-7 the work before a goal is context for a goal set for it (`showsGoal`), and under a
 * thin goal each session says what its work is and work of the goal's kind is its work
 * (drift-fold.ts, drift-kinds.ts).
 * Pure and deterministic (no model, no clock), so a replay judges every prompt as the live run did.
 *
 * Evidence of the goal is its description and the session's context (drift-fold.ts keeps it): the
 * words of the prompts judged on-goal and of the files, searches and commands the tools touched
 * meanwhile. A prompt's word is accounted for fully by a goal's word, 0.8 by a goal's concept
 * (drift-thesaurus.ts), 0.7 by a context word and 0.5 by a context concept; a generic word weighs
 * little (drift-words.ts). The prompt is on-goal when the accounted share of its words reaches
 * `onGoalShare`, or the accounted weight `onGoalWeight` (one context word: a long prompt with one
 * term of the work is still the work).
 *
 * Not judged alone (a follow-up, which continues the thread it is in, on-goal or off): a prompt
 * with at most one specific word ("run the tests", "commit this"), a command line ("pytest -x"),
 * or a short one that refers back ("use NFKC there", "and the fonts"). While off-goal, a prompt
 * that goes on with the other work (the thread's words) stays off-goal; a prompt that says it
 * turns to something else ("switching gears", "unrelated, but") needs a goal's own words.
 *
 * Each constant was chosen on the corpus (test/drift/, docs/benchmarks.md): a change to any of
 * them, the words or the thesaurus is a new method, measured there.
 */
export const driftMethod = "context-7"

/** The detectors a record may name (`drift_method`), oldest first; a record without one was judged by `lexical-1`. */
export const driftMethods = ["lexical-1", "context-2", "context-3", "context-4", "context-5", "context-6", driftMethod] as const
export type DriftMethod = (typeof driftMethods)[number]

/** Whether `method` judges as `since` introduced (each method keeps what the ones before it changed). */
export const atLeast = (method: DriftMethod, since: DriftMethod): boolean => driftMethods.indexOf(method) >= driftMethods.indexOf(since)

const onGoalShare = 0.2
const onGoalWeight = 0.7
/** Specific words a follow-up that refers back may have. */
const followUpWords = 3
/** Context words kept per user and environment (most recent last): a task's files and terms. */
export const contextSize = 32
/** Words of the other work kept while off-goal. */
export const threadSize = 16
/**
 * Context words before which a thin goal's prompts are its work (from context-6): half the context,
 * chosen on the development goals' work under thin goals (docs/benchmarks.md).
 */
export const warmUpWords = 16
/** Weight of a tool call's words that makes it the goal's work again: a goal's word counts 2, a context word 1. */
export const backOnGoal = 2

export interface GoalView {
  readonly id: string
  readonly description: string
}

export type Verdict = "on-goal" | "off-goal" | "follow-up"

export interface Judgement {
  readonly verdict: Verdict
  /** The best share of the prompt's words accounted for, over the goals. */
  readonly score: number
  /** The goal whose own words account for most of the prompt, if any do. */
  readonly goalId: string | undefined
  /** The prompt's specific words: context for what follows if it is on-goal, the thread's if off. */
  readonly stems: ReadonlyArray<string>
}

const goalWords = boundedMemo((description): ReadonlyArray<Word> => words(description))

const contextWords = (context: string | undefined): ReadonlyArray<Word> =>
  context === undefined || context === ""
    ? []
    : context.split(" ").map((s) => ({ stem: s, weight: 1, concepts: s.includes("_") ? phraseConcepts(s.replace("_", " ")) : conceptsOf(s) }))

const shares = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => a.some((c) => b.includes(c))

const matchOf = (w: Word, evidence: ReadonlyArray<Word>, same: number, concept: number): number => {
  let best = 0
  for (const e of evidence) {
    if (sameWord(w.stem, e.stem)) return same
    if (best < concept && w.concepts.length > 0 && shares(w.concepts, e.concepts)) best = concept
  }
  return best
}

/** The weight of the prompt's words that a goal and the context account for, and their share of the prompt's. */
export const accounted = (prompt: ReadonlyArray<Word>, goal: ReadonlyArray<Word>, context: ReadonlyArray<Word>) => {
  let total = 0
  let weight = 0
  for (const w of prompt) {
    total += w.weight
    weight += w.weight * Math.max(matchOf(w, goal, 1, 0.8), matchOf(w, context, 0.7, 0.5))
  }
  return { weight: Math.round(weight * 1000) / 1000, share: total === 0 ? 0 : Math.round((weight / total) * 1000) / 1000 }
}

const verdict = (v: Verdict, score: number, goalId: string | undefined, stems: ReadonlyArray<string>): Judgement => ({ verdict: v, score, goalId, stems })

/**
 * Judges a prompt against the active goals and the context; `thread` (words of the other work)
 * when the user is off-goal. Both are stems joined by spaces, as drift-fold.ts keeps them.
 */
export const judge = (text: string, goals: ReadonlyArray<GoalView>, context: string | undefined, thread?: string): Judgement => {
  const prompt = words(text)
  const stems = prompt.filter((w) => w.weight > genericWeight).map((w) => w.stem)
  if (stems.length === 0 || isCommand(text)) return verdict("follow-up", 0, undefined, stems)
  const ctx = contextWords(context)
  let share = 0
  let weight = 0
  let own = 0
  let goalId: string | undefined
  for (const goal of goals) {
    const description = goalWords(goal.description)
    const found = accounted(prompt, description, ctx)
    share = Math.max(share, found.share)
    weight = Math.max(weight, found.weight)
    const direct = accounted(prompt, description, []).share
    if (direct > own) {
      own = direct
      goalId = goal.id
    }
  }
  if (switchesTopic(text)) return verdict(own >= onGoalShare ? "on-goal" : "off-goal", share, goalId, stems)
  if (thread !== undefined) {
    const other = accounted(prompt, [], contextWords(thread)).weight
    if (other >= onGoalWeight && other >= weight) return verdict("off-goal", share, goalId, stems)
  }
  if (share >= onGoalShare || weight >= onGoalWeight) return verdict("on-goal", share, goalId, stems)
  if (stems.length <= 1 || (stems.length <= followUpWords && continues(text))) return verdict("follow-up", share, goalId, stems)
  return verdict("off-goal", share, goalId, stems)
}

/** Words that name a kind of work, not a task: a goal of only these says what sort of work, not which. */
const kindsOfWork = new Set(
  `refactor refactoring cleanup clean tidy polish upgrade upgrades migration migrations doc docs documentation feature
features improvement improvements improve maintenance misc miscellaneous chore chores infra infrastructure ops devops
debt tech performance perf optimization optimize optimise stability reliability security quality backlog ticket tickets
task tasks todo todos sprint`.trim().split(/\s+/).flatMap((k) => words(k).map((w) => w.stem))
)

/** A ticket key ("PROJ-1234"), a link or an issue number points at a task without saying it in words. */
const references = /\b[A-Z][A-Z0-9]{1,9}-\d+\b|\bhttps?:\/\/\S+|#\d+\b/g

const thin = boundedMemo((description) => words(description.replace(references, " ")).every((w) => w.weight <= genericWeight || kindsOfWork.has(w.stem)))

/**
 * Whether an active goal names no task in words, only a kind of work, a ticket or a link ("Fix
 * bugs", "Refactor", "Tech debt", "PROJ-1234"): it says too little to judge a prompt by, so the
 * session's first prompts say what its work is. "Fix the login bug" names one (login).
 */
export const isThin = (goals: ReadonlyArray<GoalView>): boolean => goals.some((g) => thin(g.description))

/** How many words a context holds. */
export const contextLength = (context: string | undefined): number => context === undefined || context === "" ? 0 : context.split(" ").length

/** How much of a tool call's words are the goal's work: a goal's own word counts `backOnGoal`, a context word 1. */
export const goalWeightOf = (stems: ReadonlyArray<string>, goals: ReadonlyArray<GoalView>, context: string | undefined): number => {
  const own = goals.flatMap((g) => goalWords(g.description).filter((w) => w.weight > genericWeight).map((w) => w.stem))
  const ctx = context === undefined || context === "" ? [] : context.split(" ")
  let n = 0
  for (const s of stems) n += own.some((e) => sameWord(s, e)) ? backOnGoal : ctx.some((e) => sameWord(s, e)) ? 1 : 0
  return n
}

/** The specific words of texts (a tool call's file, search and command; a working folder), each once. */
export const evidenceOf = (texts: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const text of texts) for (const w of words(text)) if (w.weight > genericWeight && !out.includes(w.stem)) out.push(w.stem)
  return out
}

/** The context with `stems` as its most recent words, at most `size` kept. */
export const withContext = (context: string | undefined, stems: ReadonlyArray<string>, size = contextSize): string => {
  if (stems.length === 0) return context ?? ""
  const kept = (context === undefined || context === "" ? [] : context.split(" ")).filter((s) => !stems.includes(s))
  return [...kept, ...stems].slice(-size).join(" ")
}

/**
 * Goal words and concepts in a context (a word 1, a concept 0.8) that show it is a goal's work
 * without one of the goal's own words: chosen on the development goals, where work before its goal
 * shows at least 3 and other work at most 2.4.
 */
const showsGoalWeight = 3

/**
 * Whether a context shows a goal's work (from context-7, for a goal set while none was active):
 * one of the goals' own words is in it, or enough of their words and concepts. A concept or two
 * in common is not enough: other work in the goal's area shares them.
 */
export const showsGoal = (context: string | undefined, goals: ReadonlyArray<GoalView>): boolean => {
  if (context === undefined || context === "") return false
  if (goalWeightOf(context.split(" "), goals, undefined) >= backOnGoal) return true
  const ctx = contextWords(context)
  return goals.some((g) => accounted(ctx, goalWords(g.description), []).weight >= showsGoalWeight)
}
