import type { GoalOutcome } from "./goals.ts"
import type { EventRow, GoalRow, SessionRow } from "./projection-rows.ts"
import type { UserState } from "./user-state.ts"
import type { Notice } from "./notices.ts"

/** What one step of the per-user fold (user-fold.ts, goal-fold.ts) answers. */

/** A goal-drift signal the engine should append for the user (live runs only; replay finds it in the log). */
export interface DriftDetected {
  readonly goal_id: string
  readonly score: number
  readonly off_goal_prompts: number
  /** The signal whose prompt completed the streak. */
  readonly signal_id: string
}

export interface FoldResult {
  readonly state: UserState
  /** The latest row of every session this record touched (opened, updated or closed). */
  readonly sessions: ReadonlyArray<SessionRow>
  readonly events: ReadonlyArray<EventRow>
  /** What this record made happen that webhooks may be told about (session.started, session.ended). */
  readonly notices: ReadonlyArray<Notice>
  /** For a signal: the session it was counted in. */
  readonly sessionId?: string
  /** Goals this record created or changed. */
  readonly goals?: ReadonlyArray<GoalRow>
  /** For a goal command: what it came to. */
  readonly goalOutcome?: GoalOutcome
  readonly drift?: DriftDetected
}
