import { driftStateOf } from "./drift-fold.ts"
import { atLeast, type DriftMethod, type GoalView, isThin, showsGoal } from "./drift.ts"
import type { Environment } from "./environments.ts"
import type { UserState } from "./user-state.ts"

/** The goals active before and after a goal command, and the goal it created, if it did. */
export interface GoalChange {
  readonly before: ReadonlyArray<GoalView>
  readonly after: ReadonlyArray<GoalView>
  readonly set: GoalView | undefined
}

/**
 * Whether a goal command leaves the user's context as it was (`afterGoalCommand`). From context-6:
 * while a goal stays active, unless the command set a thin goal (its work must say what it is).
 * From context-7 the context of work done while no goal was active stays only when it shows the
 * goal's work (drift.ts `showsGoal`): a goal set for work already begun knows it; a goal set for
 * new work does not take the work before it for its own.
 */
export const keepsContext = (state: UserState, environment: Environment, method: DriftMethod, change: GoalChange): boolean => {
  if (!atLeast(method, "context-6") || change.after.length === 0 || (change.set !== undefined && isThin([change.set]))) return false
  if (!atLeast(method, "context-7") || change.before.length > 0) return true
  return showsGoal(driftStateOf(state, environment).context, change.after)
}

/**
 * After a goal command the user has said what they work on: every streak starts over. Before
 * context-6 the context did too; from context-6 it stays (a goal refined, another added or one of
 * several closed leaves the work that was going on the same) unless no goal is active any more, or
 * the command set a thin goal, whose work must say what it is (drift.ts `isThin`).
 */
export const afterGoalCommand = (state: UserState, environment: Environment, keepContext = false): UserState => {
  const kept = state.drift?.[environment]
  if (kept === undefined) return state
  const { [environment]: _dropped, ...rest } = state.drift!
  const context = keepContext && typeof kept !== "number" ? kept.context : undefined
  return { ...state, drift: context ? { ...rest, [environment]: { streak: 0, context } } : rest }
}
