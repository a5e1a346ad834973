import { bestGoal } from "./drift-lexical.ts"
import { showsKind } from "./drift-kinds.ts"
import { inAnotherLanguage } from "./drift-language.ts"
import {
  atLeast,
  backOnGoal,
  contextLength,
  type DriftMethod,
  evidenceOf,
  goalWeightOf,
  isThin,
  judge,
  threadSize,
  warmUpWords,
  withContext
} from "./drift.ts"
import type { Environment } from "./environments.ts"
import type { DriftDetected } from "./fold-result.ts"
import type { GoalState } from "./goals.ts"
import type { SignalRecord } from "./records.ts"
import type { UserState } from "./user-state.ts"

/**
 * Goal drift in the fold: per user and environment, the goal the user was last on and the context
 * the detector judges follow-ups and terse prompts by (drift.ts); per session from `context-3`
 * (per user before), the streak of consecutive off-goal prompts, since when, the prompts that were
 * off-goal (the evidence) and the other work's words. The streak reaching `prompts` is a drift,
 * reported once in that session; an on-goal prompt, a `refocus-ack` or a goal command
 * (drift-goal-commands.ts) ends it. Per session, so that parallel agents of one user (one on the
 * goal, one on other work) neither reset nor feed each other's streak, and a drift's evidence is
 * its own session's prompts. `prompts` is the org's own when the record carries one (`drift_prompts`).
 * From `context-6` a thin goal's first prompts are its work, a prompt in another language than the
 * goals' is a follow-up, and a goal command keeps the context while a goal stays active; from
 * `context-7` prompts while no goal is active are context too (drift-goal-commands.ts), and
 * under a thin goal each session warms up on its own work and a prompt of the goal's kind is its
 * work (drift-kinds.ts).
 *
 * Which detector judges a record is stamped on it at acceptance (`drift_method`), so a replay
 * derives what the live run derived whichever version replays it.
 */
export interface DriftSettings {
  /** `lexical-1` only: a prompt scoring below this is off-goal (context-2's threshold is part of its method). */
  readonly threshold: number
  /** How many consecutive off-goal prompts make a drift. */
  readonly prompts: number
}

export const defaultDriftSettings: DriftSettings = { threshold: 0.2, prompts: 3 }

/** An off-goal prompt of the streak, as the goal-drift signal shows it. */
export interface OffGoalPrompt {
  readonly signal_id: string
  /** The prompt's first characters (the whole prompt is in its own signal). */
  readonly prompt: string
}

/** One streak of off-goal prompts: a session's (from context-3), or the user's (before). */
export interface Streak {
  readonly streak: number
  /** When the streak's first off-goal prompt came. */
  readonly since?: string
  /** The streak's first off-goal prompts, at most `prompts` of them. */
  readonly off?: ReadonlyArray<OffGoalPrompt>
  /** The last judgement: a follow-up continues it. */
  readonly last?: "on-goal" | "off-goal"
  /** While off-goal: words of the other work (its prompts and files), space-separated, most recent last. */
  readonly thread?: string
  /**
   * The goal the last on-goal prompt was closest to: the user's; from context-3 also a session's
   * while several goals are active, so that its drift names the goal it was on.
   */
  readonly goal_id?: string
  /**
   * From context-7, while a thin goal is active: the words the session's own work has said so far,
   * until they are `warmUpWords` (then `warm`). Each session says what its work is, as the second
   * task under "Fix bugs" is not the first.
   */
  readonly warming?: string
  /** The session has said what its work is (`warming` is dropped then: memory). */
  readonly warm?: true
  /**
   * From context-7: this streak has made its drift. So it makes one whatever the org's number does
   * meanwhile: none again when the number rises past it, one still when it falls below it.
   */
  readonly drifted?: true
}

export interface DriftState extends Streak {
  /** Words of the on-goal work so far, the same way (drift.ts `withContext`). */
  readonly context?: string
  /**
   * From context-3: the streaks of the sessions that are off-goal, by session id (with several goals
   * active, also the goal an on-goal session was on); a session not here is on the goal.
   */
  readonly sessions?: Readonly<Record<string, Streak>>
}

/** Sessions a user's drift state keeps at most (the earliest streak goes first, on-goal ones before any): parallel agents, not history. */
export const maxDriftSessions = 8

/** Enough of a prompt to recognise it on the timeline; the whole prompt is in its own signal. */
const excerptLength = 60
const none: DriftState = { streak: 0 }

/** The user's drift state in an environment (a state snapshotted before context-2 kept the streak alone). */
export const driftStateOf = (state: UserState, environment: Environment): DriftState => {
  const kept = state.drift?.[environment]
  return kept === undefined ? none : typeof kept === "number" ? { streak: kept } : kept
}

/** A session's streak: its own from context-3; the user's, which every session shared, before. */
export const sessionStreakOf = (state: UserState, environment: Environment, sessionId: string): Streak => {
  const drift = driftStateOf(state, environment)
  return drift.sessions?.[sessionId] ?? (drift.streak > 0 ? drift : none)
}

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

const promptText = (r: SignalRecord): string | null => {
  if (r.type === "user-prompt") return text(r.metadata.prompt)
  if (r.type === "context-switch") return text(r.metadata.prompt) ?? text(r.metadata.description)
  return null
}

/** Whether a method keeps a streak per session (from context-3) rather than per user (and reads Gemini CLI's folders). */
const perSession = (method: DriftMethod) => method !== "lexical-1" && method !== "context-2"

const pathValues = (keys: string) => new RegExp(`"(?:${keys})"\\s*:\\s*"([^"]{1,400})"`, "g")
const pathKeys = pathValues("file_path|notebook_path|path|pattern")
/** From context-3 also Gemini CLI's folder (`list_directory`, `grep_search`) and older `read_file` keys. */
const morePathKeys = pathValues("file_path|notebook_path|path|pattern|dir_path|absolute_path")

/** What a tool call touched: its files, its search, its command, the tool's working folder. */
const touched = (m: SignalRecord["metadata"], method: DriftMethod): ReadonlyArray<string> => {
  const out: Array<string> = []
  const cwd = typeof m.cwd === "string" && m.cwd.length > 1 ? `${m.cwd.replace(/\/+$/, "")}/` : undefined
  const input = typeof m.tool_input === "string" ? m.tool_input : m.tool_input !== undefined ? JSON.stringify(m.tool_input) : ""
  // A path inside the working folder counts from there: the folder's own words are the repository's, not the task's.
  for (const match of input.slice(0, 4000).matchAll(perSession(method) ? morePathKeys : pathKeys)) {
    out.push(cwd && match[1]!.startsWith(cwd) ? match[1]!.slice(cwd.length) : match[1]!)
  }
  for (const value of [m.command, m.git_branch]) if (typeof value === "string") out.push(value.slice(0, 1000))
  return out
}

/**
 * What a `refocus-ack` saying the drift was the goal's work (`on_goal`) teaches the context: the
 * words of its session's other work while the session is still off-goal (from context-4), and
 * from context-5 also those of the prompts it names (`prompts`, the drift's evidence as the
 * adapter was told it), so that an answer given after the session moved on teaches as well.
 */
const answerWords = (current: Streak, r: SignalRecord, method: DriftMethod): ReadonlyArray<string> => {
  if (r.metadata.on_goal !== true || method === "lexical-1" || method === "context-2" || method === "context-3") return []
  const thread = current.thread ? current.thread.split(" ") : []
  const named = method !== "context-4" && Array.isArray(r.metadata.prompts)
    ? evidenceOf(r.metadata.prompts.filter((p): p is string => typeof p === "string").slice(0, 10).map((p) => p.slice(0, 200)))
    : []
  return [...new Set([...thread, ...named])]
}

const ended = (s: DriftState, last: DriftState["last"]): DriftState => {
  const { since: _s, off: _o, thread: _t, drifted: _d, ...rest } = s
  return { ...rest, streak: 0, ...(last ? { last } : {}) }
}

export interface DriftStep {
  readonly state: DriftState
  readonly judged?: "on-goal" | "off-goal"
  readonly detected?: DriftDetected
}

const activeGoals = (state: UserState, environment: Environment): ReadonlyArray<GoalState> =>
  Object.values(state.goals ?? {}).filter((g) => g.environment === environment && g.status === "active")

/** One signal's effect on the user's drift state; `sessionId` is the session the signal is in. */
export const foldDrift = (state: UserState, r: SignalRecord, settings: DriftSettings, sessionId: string): DriftStep => {
  const current = driftStateOf(state, r.environment)
  const method: DriftMethod = r.drift_method ?? "lexical-1"
  if (!perSession(method)) return foldStreak(current, method, state, r, settings)
  // A streak kept per user before context-3 is not carried over: each session's starts afresh.
  const { streak: _s, since: _i, off: _o, last: _l, thread: _t, sessions, ...shared } = current
  const own = sessions?.[sessionId]
  if (r.type === "refocus-ack" && own === undefined) {
    // Answered from a session that is not off-goal (another client of the user's, or after the session moved on): it answers them all.
    const taught = answerWords(none, r, method)
    if (taught.length > 0) return { state: { ...shared, context: withContext(shared.context, taught), streak: 0 } }
    return { state: sessions === undefined && current.streak === 0 ? current : { ...shared, streak: 0 } }
  }
  const view: DriftState = { ...shared, ...(own ?? none) }
  const step = foldStreak(view, method, state, r, settings)
  if (step.state === view) return { ...step, state: current }
  const { streak, since, off, last, thread, sessions: _n, goal_id, warming, warm, drifted, ...next } = step.state
  // The user's goal is the last one any session was on; with several active, each session keeps its own to name in its drift.
  const userGoal = goal_id !== view.goal_id ? goal_id : shared.goal_id
  const ownGoal = goal_id !== undefined && activeGoals(state, r.environment).length > 1 ? { goal_id } : {}
  const others = withoutKey(sessions, sessionId)
  const said = warm ? { warm } : warming !== undefined ? { warming } : {}
  const kept = last === "off-goal"
    ? capped({
      ...others,
      [sessionId]: {
        streak,
        ...(since ? { since } : {}),
        ...(off ? { off } : {}),
        last,
        ...(thread ? { thread } : {}),
        ...(drifted ? { drifted } : {}),
        ...ownGoal,
        ...said
      }
    })
    : "goal_id" in ownGoal || warm || warming !== undefined
    ? capped({ ...others, [sessionId]: { streak: 0, ...ownGoal, ...said } })
    : others
  return {
    ...step,
    state: { ...next, ...(userGoal ? { goal_id: userGoal } : {}), streak: 0, ...(Object.keys(kept).length > 0 ? { sessions: kept } : {}) }
  }
}

const withoutKey = (streaks: Readonly<Record<string, Streak>> | undefined, key: string): Record<string, Streak> => {
  const { [key]: _dropped, ...rest } = streaks ?? {}
  return rest
}

/** At most `maxDriftSessions` streaks: the one that began first goes. */
const capped = (streaks: Record<string, Streak>): Record<string, Streak> => {
  const ids = Object.keys(streaks)
  if (ids.length <= maxDriftSessions) return streaks
  const first = ids.reduce((a, b) => ((streaks[b]!.since ?? "") < (streaks[a]!.since ?? "") ? b : a))
  return withoutKey(streaks, first)
}

/** A session that ended takes its streak with it. */
export const afterSessionEnd = (state: UserState, environment: Environment, sessionId: string): UserState => {
  const kept = state.drift?.[environment]
  if (kept === undefined || typeof kept === "number" || kept.sessions?.[sessionId] === undefined) return state
  const rest = withoutKey(kept.sessions, sessionId)
  const { sessions: _s, ...drift } = kept
  return { ...state, drift: { ...state.drift, [environment]: Object.keys(rest).length > 0 ? { ...drift, sessions: rest } : drift } }
}

/** From context-7, under a thin goal: the session's own warm-up, the distinct words its work has said. */
const learning = (current: Streak, method: DriftMethod, state: UserState, r: SignalRecord, stems: ReadonlyArray<string>): Pick<Streak, "warming" | "warm"> => {
  if (!atLeast(method, "context-7") || current.warm || stems.length === 0 || !isThin(activeGoals(state, r.environment))) return {}
  const said = withContext(current.warming, stems, warmUpWords)
  return contextLength(said) >= warmUpWords ? { warm: true } : { warming: said }
}

/** One signal's effect on a streak and the context: the user's whole drift state, or a session's view of it. */
const foldStreak = (current: DriftState, method: DriftMethod, state: UserState, r: SignalRecord, settings: DriftSettings): DriftStep => {
  if (r.type === "refocus-ack") {
    const answered = ended(current, method === "lexical-1" ? undefined : "on-goal")
    const taught = answerWords(current, r, method)
    return { state: taught.length === 0 ? answered : { ...answered, context: withContext(current.context, taught) } }
  }
  if (method !== "lexical-1" && (r.type === "pre-tool" || r.type === "post-tool")) {
    // The working folder's own words (the repository's name) are in every path of it: no evidence of a task.
    const repository = typeof r.metadata.cwd === "string" ? evidenceOf([r.metadata.cwd]) : []
    const stems = evidenceOf(touched(r.metadata, method)).filter((s) => !repository.includes(s))
    if (current.last !== "off-goal") {
      return { state: { ...current, ...learning(current, method, state, r, stems), context: withContext(current.context, stems) } }
    }
    // Off-goal, a tool call on the goal's files or terms says the work is back on it.
    if (goalWeightOf(stems, activeGoals(state, r.environment), current.context) < backOnGoal) {
      return { state: { ...current, thread: withContext(current.thread, stems, threadSize) } }
    }
    return { state: { ...ended(current, "on-goal"), context: withContext(current.context, stems) } }
  }
  const prompt = promptText(r)
  if (prompt === null) return { state: current }
  const goals = activeGoals(state, r.environment)
  if (goals.length === 0) {
    // From context-7 the work before any goal is set is context too: a goal set for it finds its words.
    if (!atLeast(method, "context-7")) return { state: current }
    const stems = evidenceOf([prompt])
    return { state: stems.length === 0 ? current : { ...current, context: withContext(current.context, stems) } }
  }
  let onGoal: boolean
  let goalId: string | undefined
  let score: number
  let context = current.context
  let stems: ReadonlyArray<string> = []
  if (method === "lexical-1") {
    const best = bestGoal(prompt, goals)
    if (best === undefined) return { state: current }
    onGoal = best.score >= settings.threshold
    goalId = best.goalId
    score = best.score
  } else {
    const judgement = judge(prompt, goals, current.context, current.last === "off-goal" ? current.thread : undefined)
    // From context-6 a prompt in another language than the goals' is not judged by their words: a follow-up.
    const followUp = judgement.verdict === "follow-up" || (atLeast(method, "context-6") && inAnotherLanguage(prompt, goals))
    onGoal = followUp ? current.last !== "off-goal" : judgement.verdict === "on-goal"
    // From context-6: a thin goal's first prompts say what its work is (not while a session is off-goal);
    // from context-7 each session's, as the user's second task under "Fix bugs" is not the first.
    const warmingUp = atLeast(method, "context-7") ? !current.warm : contextLength(current.context) < warmUpWords
    if (!onGoal && atLeast(method, "context-6") && current.last !== "off-goal" && warmingUp && isThin(goals)) onGoal = true
    // From context-7: any task of the kind a thin goal names is its work ("Fix bugs": the second bug too).
    if (!onGoal && atLeast(method, "context-7") && showsKind(prompt, goals.filter((g) => isThin([g])))) onGoal = true
    goalId = judgement.goalId
    score = judgement.score
    if (onGoal) context = withContext(context, judgement.stems)
    stems = judgement.stems
  }
  if (onGoal) {
    const next = ended(
      { ...current, ...(goalId ? { goal_id: goalId } : {}), ...learning(current, method, state, r, stems) },
      method === "lexical-1" ? undefined : "on-goal"
    )
    return { state: context === undefined ? next : { ...next, context }, judged: "on-goal" }
  }
  // The org's own streak when the signal was accepted (PATCH /org), else the deployment's.
  const prompts = r.drift_prompts ?? settings.prompts
  const streak = current.streak + 1
  const since = current.since ?? r.ts
  const off = [...(current.off ?? []), { signal_id: r.signal_id, prompt: prompt.replace(/\s+/g, " ").trim().slice(0, excerptLength) }]
    .slice(0, prompts)
  const next: DriftState = {
    ...current,
    streak,
    since,
    off,
    ...(method === "lexical-1" ? {} : { last: "off-goal" as const, thread: withContext(current.thread, stems, threadSize) })
  }
  // Before context-7 a drift came when the streak reached the number exactly (the org's at that signal).
  const due = atLeast(method, "context-7") ? prompts > 0 && !current.drifted && streak >= prompts : streak === prompts
  if (!due) return { state: next, judged: "off-goal" }
  // The goal drifted from: the one the user was last on while it is still active, else the closest.
  const goal = goals.find((g) => g.id === current.goal_id) ?? goals.find((g) => g.id === goalId) ?? goals[0]!
  const detected: DriftDetected = {
    goal_id: goal.id,
    goal: goal.description.slice(0, 200),
    score,
    off_goal_prompts: streak,
    signal_id: r.signal_id,
    since,
    evidence: off,
    method
  }
  return { state: atLeast(method, "context-7") ? { ...next, drifted: true } : next, judged: "off-goal", detected }
}
