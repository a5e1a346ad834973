import type { DriftMethod } from "./drift.ts"
import type { OffGoalPrompt } from "./drift-fold.ts"
import type { GoalOutcome } from "./goals.ts"
import type { EventRow, GoalRow, SessionRow } from "./projection-rows.ts"
import type { UserState } from "./user-state.ts"
import type { Notice } from "./notices.ts"

/** What one step of the per-user fold (user-fold.ts, goal-fold.ts) answers. */

/** A goal-drift signal the engine should append for the user (live runs only; replay finds it in the log). */
export interface DriftDetected {
  /** The goal the user drifted from, and its description's first characters. */
  readonly goal_id: string
  readonly goal: string
  /** The best score of the prompt that completed the streak. */
  readonly score: number
  readonly off_goal_prompts: number
  /** The signal whose prompt completed the streak. */
  readonly signal_id: string
  /** When the streak's first off-goal prompt came. */
  readonly since: string
  /** The off-goal prompts of the streak. */
  readonly evidence: ReadonlyArray<OffGoalPrompt>
  /** The detector that judged them (stamped on their records). */
  readonly method: DriftMethod
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
  /** For a prompt compared with the user's active goals: what the detector made of it. */
  readonly judged?: "on-goal" | "off-goal"
}
