/**
 * drift: the goal-drift detector on the labelled corpus (test/drift/), in this process, no service:
 * its figures (per prompt, per session) on the development, the held-out, the wide and both fresh
 * held-out sets, for the method in force and the six before it, and under thin goals ("Fix bugs",
 * "Sprint tasks"); what judging a prompt adds to the fold of its signal; and the memory a user's
 * drift state holds.
 */
import { performance } from "node:perf_hooks"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { type DriftMethod, driftMethod, driftMethods } from "../../src/domain/drift.ts"
import type { SignalRecord } from "../../src/domain/records.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { defaultFoldSettings, type UserState } from "../../src/domain/user-state.ts"
import {
  type CorpusGoal,
  development,
  fresh,
  freshTwo,
  held,
  inOtherLanguages,
  isPrompt,
  underAnyWorkGoals,
  underThinGoals,
  wide
} from "../../test/drift/corpus.ts"
import { evaluate, firstHalf, recordsOf, run } from "../../test/drift/evaluate.ts"
import { goalRecord } from "../../test/drift/replay.ts"
import { round } from "../measure.ts"
import type { Row } from "../report.ts"

const quantile = (sorted: ReadonlyArray<number>, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0

/** Each prompt of the second half of every goal's work, with the state before it (goal set, first half folded). */
const promptsInContext = (goals: ReadonlyArray<CorpusGoal>) =>
  goals.flatMap((goal) => {
    const set = run([goalRecord(goal, driftMethod)], defaultFoldSettings).state
    const half = firstHalf(goal.work)
    const before = run(recordsOf(goal, half, `${goal.id}:cost`, driftMethod), defaultFoldSettings, set).state
    const prompts = recordsOf(goal, goal.work.slice(half.length).filter(isPrompt), `${goal.id}:cost`, driftMethod)
    const { goals: _goals, ...withoutGoals } = before
    return prompts.map((record) => ({ record, before, withoutGoals: withoutGoals as UserState }))
  })

/** Microseconds of one fold of `record` on `state`: the median of `reps` runs. */
const foldTime = (state: UserState, record: SignalRecord, reps: number) => {
  const times: Array<number> = []
  for (let i = 0; i < reps; i++) {
    const t = performance.now()
    fold(state, record, { partition: 0, offset: i }, defaultFoldSettings)
    times.push((performance.now() - t) * 1000)
  }
  return times.sort((a, b) => a - b)[reps >> 1]!
}

/** What judging a prompt adds to its fold: the same prompt folded with the user's goals and without any (nothing to judge). */
const cost = (goals: ReadonlyArray<CorpusGoal>, reps: number) => {
  const cases = promptsInContext(goals)
  for (const c of cases) foldTime(c.before, c.record, 20)
  const judged: Array<number> = []
  const plain: Array<number> = []
  const added: Array<number> = []
  for (const c of cases) {
    const a = foldTime(c.before, c.record, reps)
    const b = foldTime(c.withoutGoals, c.record, reps)
    judged.push(a)
    plain.push(b)
    added.push(a - b)
  }
  for (const xs of [judged, plain, added]) xs.sort((a, b) => a - b)
  return {
    prompts: cases.length,
    fold_p50_us: round(quantile(judged, 0.5)),
    fold_without_goals_p50_us: round(quantile(plain, 0.5)),
    judging_added_p50_us: round(quantile(added, 0.5)),
    judging_added_p99_us: round(quantile(added, 0.99))
  }
}

/** The live heap of `json` values parsed `copies` times each, per value (after full collections). */
const heapPer = (jsons: ReadonlyArray<string>, copies: number) => {
  setFlagsFromString("--expose-gc")
  const gc = runInNewContext("gc") as () => void
  gc()
  const before = process.memoryUsage().heapUsed
  const kept = jsons.flatMap((json) => Array.from({ length: copies }, () => JSON.parse(json) as unknown))
  gc()
  const bytes = (process.memoryUsage().heapUsed - before) / kept.length
  return kept.length > 0 ? Math.round(bytes) : 0
}

/**
 * What an active user's state holds, with its drift state and without: every corpus user after its
 * work and a drift (the largest drift state: context, the other work's thread, the evidence).
 */
const memory = (goals: ReadonlyArray<CorpusGoal>) => {
  const states = goals.map((goal) =>
    run([goalRecord(goal, driftMethod), ...recordsOf(goal, [...goal.work, ...goal.drift], `${goal.id}:memory`, driftMethod)], defaultFoldSettings).state
  )
  const drifts = states.map((s) => JSON.stringify(s.drift))
  const without = states.map(({ drift: _d, ...rest }) => JSON.stringify(rest))
  return {
    drift_state_json_bytes_p50: quantile(drifts.map((d) => d.length).sort((a, b) => a - b), 0.5),
    drift_state_json_bytes_max: Math.max(...drifts.map((d) => d.length)),
    drift_state_heap_bytes_per_user: heapPer(drifts, 200),
    user_state_heap_bytes_per_user: heapPer(states.map((s) => JSON.stringify(s)), 200),
    user_state_without_drift_heap_bytes_per_user: heapPer(without, 200)
  }
}

const figuresOf = (name: string, goals: ReadonlyArray<CorpusGoal>, method: DriftMethod): Row => ({
  scenario: "drift",
  log: "-",
  figures: { corpus: name, goals: goals.length, method, ...evaluate(goals, { method }).figures }
})

export const driftScenario = (record: (row: Row) => void, smoke: boolean) => {
  for (const method of driftMethods) {
    record(figuresOf("development", development, method))
    record(figuresOf("held-out", held, method))
    record(figuresOf("wide", wide, method))
    record(figuresOf("fresh held-out", fresh, method))
    record(figuresOf("second fresh held-out", freshTwo, method))
  }
  // The same work under a thin goal of its kind ("Fix bugs") or of any work ("Sprint tasks"), and work prompted in another
  // language than its goal's: what context-6 and context-7 changed.
  for (const method of ["context-5", "context-6", driftMethod] as const) {
    record(figuresOf("other languages", inOtherLanguages, method))
    for (
      const [name, goals] of [["development", development], ["held-out", held], ["wide", wide], ["fresh held-out", fresh], ["second fresh held-out",
        freshTwo]] as const
    ) {
      record(figuresOf(`${name}, thin goals`, underThinGoals(goals), method))
      record(figuresOf(`${name}, goals of any work`, underAnyWorkGoals(goals), method))
    }
  }
  record({ scenario: "drift", log: "-", figures: { measured: "cost", method: driftMethod, ...cost([...development, ...held], smoke ? 5 : 200) } })
  // Under thin goals a prompt not judged on-goal is also read for the goal's kind of work (drift-kinds.ts).
  record({
    scenario: "drift",
    log: "-",
    figures: { measured: "cost", goals: "thin", method: driftMethod, ...cost(underThinGoals([...development, ...held]), smoke ? 5 : 200) }
  })
  record({ scenario: "drift", log: "-", figures: { measured: "memory", method: driftMethod, ...memory([...development, ...held]) } })
  // Under thin goals a session keeps its own first words while it says what its work is.
  record({
    scenario: "drift",
    log: "-",
    figures: { measured: "memory", goals: "thin", method: driftMethod, ...memory(underThinGoals([...development, ...held])) }
  })
}
