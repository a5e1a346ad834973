/**
 * Sessions in which goals are not set once before the work, as people also use them: a goal set
 * once the work has begun, a goal set after other work, two goals active at once. The same labels
 * as the rest of the corpus (corpus.ts): the goal's work is on-goal, its other work off-goal.
 */
import type { DriftMethod } from "../../src/domain/drift.ts"
import type { SignalRecord } from "../../src/domain/records.ts"
import type { FoldSettings } from "../../src/domain/user-state.ts"
import { type CorpusGoal, isPrompt } from "./corpus.ts"
import type { SessionOutcome } from "./evaluate.ts"
import { calledOff, fired, firstDriftAt, firstHalf, followedBy, goalRecord, recordsOf, run } from "./replay.ts"

/**
 * goal-later: the first half of the goal's work done while no goal is active, then the goal set
 * (POST /goals), the work going on in the same session; its prompts after the goal are counted.
 * goal-after-other: the other work done while no goal is active, then the goal set, the first half
 * of its work, and back to the other work (drifted from there). two-goals: the goal's work while
 * `next` (another goal of the set) is active too; two-goals-switch: its first half, then `next`'s
 * work in the same session (both on-goal); two-goals-drift: its first half, then its other work.
 */
export const goalTimingSessions = (goal: CorpusGoal, next: CorpusGoal, stamp: DriftMethod, settings: FoldSettings): ReadonlyArray<SessionOutcome> => {
  const half = firstHalf(goal.work)
  const setAt = (records: ReadonlyArray<SignalRecord>, cut: number) => ({ ...goalRecord(goal, stamp), ts: records[cut - 1]!.ts })

  const later = recordsOf(goal, goal.work, `${goal.id}:goal-later`, stamp)
  const laterCut = recordsOf(goal, half, `${goal.id}:goal-later`, stamp).length
  const beforeGoal = run(later.slice(0, laterCut), settings).state
  const afterGoal = run([setAt(later, laterCut), ...later.slice(laterCut)], settings, beforeGoal).results

  const other = recordsOf(goal, [...goal.drift, ...half, ...goal.drift], `${goal.id}:goal-after-other`, stamp)
  const otherCut = recordsOf(goal, goal.drift, `${goal.id}:goal-after-other`, stamp).length
  const beforeOther = run(other.slice(0, otherCut), settings).state
  const back = run([setAt(other, otherCut), ...other.slice(otherCut)], settings, beforeOther).results
  const backAt = firstDriftAt(back, half.filter(isPrompt).length)

  const two = run([goalRecord(goal, stamp), { ...goalRecord(next, stamp), user_id: `user_${goal.id}` }], settings).state
  const work = run(recordsOf(goal, goal.work, `${goal.id}:two-goals`, stamp), settings, two).results
  // The other goal's work as this user's, in this user's session.
  const switching = followedBy(goal, half, next, `${goal.id}:two-goals-switch`, stamp)
  const switched = run(switching.records, settings, two).results
  const afterSwitch = switched.slice(switching.cut)
  const drifted = run(recordsOf(goal, [...half, ...goal.drift], `${goal.id}:two-goals-drift`, stamp), settings, two).results
  const driftAt = firstDriftAt(drifted, half.filter(isPrompt).length)

  return [
    { goal: goal.id, session: "goal-later", fired: fired(afterGoal), afterDrift: calledOff(afterGoal) },
    { goal: goal.id, session: "goal-after-other", fired: fired(back), ...(backAt !== undefined ? { firedAt: backAt } : {}) },
    { goal: goal.id, session: "two-goals", fired: fired(work), afterDrift: calledOff(work) },
    { goal: goal.id, session: "two-goals-switch", fired: fired(switched), afterDrift: calledOff(afterSwitch) },
    { goal: goal.id, session: "two-goals-drift", fired: fired(drifted), ...(driftAt !== undefined ? { firedAt: driftAt } : {}) }
  ]
}
