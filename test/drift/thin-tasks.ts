/**
 * Several tasks under a thin goal ("Fix bugs", corpus.ts `underThinGoals`): any task of the goal's
 * kind is its work, the next bug as much as the first; a task of another kind is not (under a goal
 * of any work, "Sprint tasks", it is). Labelled by the corpus's kinds: the next goal of the same
 * kind is another task of it, the next of another kind is other work.
 */
import type { DriftMethod } from "../../src/domain/drift.ts"
import type { FoldSettings } from "../../src/domain/user-state.ts"
import { type CorpusGoal, isPrompt } from "./corpus.ts"
import type { SessionOutcome } from "./evaluate.ts"
import { calledOff, fired, firstDriftAt, firstHalf, followedBy, goalRecord, recordsOf, run } from "./replay.ts"

/**
 * thin-next-task: the first half of the goal's work, then `sameKind`'s work in the same session (its
 * prompts counted); thin-next-session: the goal's work in a session, then `sameKind`'s in a new one;
 * thin-other-kind: the first half, then `otherKind`'s work (drifted from there; none under a goal
 * of any work, whose is every task).
 */
export const thinTaskSessions = (
  goal: CorpusGoal,
  sameKind: CorpusGoal | undefined,
  otherKind: CorpusGoal | undefined,
  stamp: DriftMethod,
  settings: FoldSettings
): ReadonlyArray<SessionOutcome> => {
  const set = run([goalRecord(goal, stamp)], settings).state
  const half = firstHalf(goal.work)
  const out: Array<SessionOutcome> = []
  if (sameKind !== undefined) {
    const next = followedBy(goal, half, sameKind, `${goal.id}:thin-next-task`, stamp)
    const afterNext = run(next.records, settings, set).results.slice(next.cut)
    out.push({ goal: goal.id, session: "thin-next-task", fired: fired(afterNext), afterDrift: calledOff(afterNext) })
    const worked = run(recordsOf(goal, goal.work, `${goal.id}:thin-first-session`, stamp), settings, set).state
    const newSession = run(recordsOf({ ...sameKind, id: goal.id }, sameKind.work, `${goal.id}:thin-next-session`, stamp), settings, worked).results
    out.push({ goal: goal.id, session: "thin-next-session", fired: fired(newSession), afterDrift: calledOff(newSession) })
  }
  if (otherKind === undefined) return out
  const other = followedBy(goal, half, otherKind, `${goal.id}:thin-other-kind`, stamp)
  const otherResults = run(other.records, settings, set).results
  const otherAt = firstDriftAt(otherResults, half.filter(isPrompt).length)
  out.push({ goal: goal.id, session: "thin-other-kind", fired: fired(otherResults), ...(otherAt !== undefined ? { firedAt: otherAt } : {}) })
  return out
}
