/**
 * The corpus as the engine sees it: each step as the signals an adapter sends (Claude Code's
 * shape), a goal's POST /goals as its record, and records run through the engine's own fold
 * (src/domain/user-fold.ts) in log order.
 */
import type { DriftMethod } from "../../src/domain/drift.ts"
import type { GoalRecord, LogRecord, SignalRecord } from "../../src/domain/records.ts"
import type { FoldResult } from "../../src/domain/fold-result.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { emptyUserState, type FoldSettings, type UserState } from "../../src/domain/user-state.ts"
import { type CorpusGoal, isPrompt, type Step } from "./corpus.ts"

const start = Date.parse("2026-11-23T09:00:00.000Z")

/** The signals an adapter sends for the steps (Claude Code's shape: a prompt, or a tool call's pre-tool and post-tool). */
export const recordsOf = (goal: CorpusGoal, steps: ReadonlyArray<Step>, session: string, method: DriftMethod) => {
  let at = start + 60_000
  let n = 0
  const signal = (type: SignalRecord["type"], metadata: Record<string, unknown>): SignalRecord => {
    at += 20_000
    n++
    return ({
      ...(method === "lexical-1" ? {} : { drift_method: method }),
      v: 1, kind: "signal", org_id: "org_corpus", environment: "live", user_id: `user_${goal.id}`,
      ts: new Date(at).toISOString(), signal_id: `sig_${session}_${n}`, type, adapter: "claude-code", client_session_id: session,
      metadata: { model: "claude-sonnet-4-5", cwd: goal.cwd, ...metadata }, session_timeout_s: 1800,
      cost: { usd: 0, estimated: false, model_known: true }
    })
  }
  const out: Array<SignalRecord> = []
  for (const step of steps) {
    if (isPrompt(step)) {
      out.push(signal("user-prompt", { prompt: step, prompt_chars: step.length }))
      continue
    }
    const call = toolCall(goal.cwd, step)
    out.push(signal("pre-tool", call), signal("post-tool", call))
  }
  return out
}

const absolute = (cwd: string, path: string) => (path.startsWith("/") ? path : `${cwd}/${path}`)

/** A tool call's metadata as the adapter sends it (`toolFields` in adapters/src/tools/common.js). */
const toolCall = (cwd: string, step: Exclude<Step, string>): Record<string, unknown> => {
  if ("bash" in step) return { tool_name: "Bash", command: step.bash, tool_input: JSON.stringify({ command: step.bash }) }
  if ("grep" in step) return { tool_name: "Grep", tool_input: JSON.stringify({ pattern: step.grep, path: absolute(cwd, step.path ?? ".") }) }
  const [name, path] = "read" in step ? ["Read", step.read] : "edit" in step ? ["Edit", step.edit] : ["Write", step.write]
  return { tool_name: name, tool_input: JSON.stringify({ file_path: absolute(cwd, path) }) }
}

export const goalRecord = (goal: CorpusGoal, method: DriftMethod): GoalRecord => ({
  ...(method === "lexical-1" ? {} : { drift_method: method }),
  v: 1, kind: "goal", org_id: "org_corpus", environment: "live", user_id: `user_${goal.id}`,
  ts: new Date(start).toISOString(), command_id: `gcmd_${goal.id}`, op: "create", goal_id: `goal_${goal.id}`,
  description: goal.goal, adapter: "claude-code"
})

export interface Run {
  readonly state: UserState
  /** Each record's fold result, in order. */
  readonly results: ReadonlyArray<{ readonly record: LogRecord; readonly result: FoldResult }>
}

export const run = (records: ReadonlyArray<LogRecord>, settings: FoldSettings, from: UserState = emptyUserState): Run => {
  let state = from
  const results: Array<{ record: LogRecord; result: FoldResult }> = []
  records.forEach((record, offset) => {
    const result = fold(state, record, { partition: 0, offset }, settings)
    state = result.state
    results.push({ record, result })
  })
  return { state, results }
}

/**
 * `run`, with the user answering each drift: a refocus-ack saying the drift was wrong (its prompts
 * were the goal's work, `on_goal: true`, naming them), as `signal-engine-adapter goal not-drift`
 * sends it; once the next signal is in, or `late` prompts later.
 */
export const runAnswering = (records: ReadonlyArray<SignalRecord>, settings: FoldSettings, from: UserState, late = 0): Run => {
  let pending: Array<{ readonly answer: SignalRecord; wait: number }> = []
  let state = from
  const results: Array<{ record: LogRecord; result: FoldResult }> = []
  const apply = (r: LogRecord) => {
    const result = fold(state, r, { partition: 0, offset: results.length }, settings)
    state = result.state
    results.push({ record: r, result })
    return result
  }
  for (const record of records) {
    const result = apply(record)
    for (const p of pending) p.wait === 0 ? apply(p.answer) : record.type === "user-prompt" && p.wait--
    pending = pending.filter((p) => !results.some((r) => r.record === p.answer))
    if (!result.drift) continue
    const metadata = { on_goal: true, prompts: result.drift.evidence.map((e) => e.prompt) }
    pending.push({ answer: { ...record, signal_id: `${record.signal_id}_answer`, type: "refocus-ack", metadata }, wait: late })
  }
  return { state, results }
}

/** The steps of the work up to the middle: its first half of prompts and their tool calls. */
export const firstHalf = (work: ReadonlyArray<Step>): ReadonlyArray<Step> => {
  const prompts = work.filter(isPrompt).length
  let seen = 0
  for (let i = 0; i < work.length; i++) {
    if (isPrompt(work[i]!) && ++seen > Math.ceil(prompts / 2)) return work.slice(0, i)
  }
  return work
}

/** Two sessions' records as one user's parallel agents send them: one of each in turn. */
export const interleaved = (a: ReadonlyArray<SignalRecord>, b: ReadonlyArray<SignalRecord>): ReadonlyArray<SignalRecord> =>
  Array.from({ length: Math.max(a.length, b.length) }, (_, i) => [a[i], b[i]]).flat().filter((r) => r !== undefined)


const prompted = (r: Run["results"][number]) => r.record.kind === "signal" && r.record.type === "user-prompt"

/** The prompts of results and how many were judged off-goal. */
export const calledOff = (results: Run["results"]) => {
  const prompts = results.filter(prompted)
  return { prompts: prompts.length, calledOff: prompts.filter((r) => r.result.judged === "off-goal").length }
}

/** How many drifts results raised. */
export const fired = (results: Run["results"]) => results.filter((r) => r.result.drift).length

/**
 * Where a drifted session's first drift came: at which prompt of its other work (1-based), the
 * first `before` prompts being the goal's; undefined when none came, or one came before the switch.
 */
export const firstDriftAt = (results: Run["results"], before: number): number | undefined => {
  let seen = 0
  for (const r of results) {
    if (prompted(r)) seen++
    if (r.result.drift) return seen > before ? seen - before : undefined
  }
  return undefined
}

/**
 * One session of `goal`'s user: `steps` of its own, then `next`'s work (another goal's, as this
 * user's), each signal after the one before; and how many records are the first part's.
 */
export const followedBy = (goal: CorpusGoal, steps: ReadonlyArray<Step>, next: CorpusGoal, session: string, method: DriftMethod) => {
  const first = recordsOf(goal, steps, session, method)
  const unshifted = recordsOf({ ...next, id: goal.id }, next.work, session, method)
  const shift = Date.parse(first.at(-1)!.ts) - Date.parse(unshifted[0]!.ts) + 20_000
  const rest = unshifted.map((r) => ({ ...r, signal_id: `${r.signal_id}_next`, ts: new Date(Date.parse(r.ts) + shift).toISOString() }))
  return { records: [...first, ...rest], cut: first.length }
}
