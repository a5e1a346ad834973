import { Schema } from "effect"
import type { Environment } from "./environments.ts"
import { Timestamp } from "./tenancy.ts"

/** Goals (spec §2.7): what a user says they are working on, per environment. */
export const GoalStatus = Schema.Literals(["active", "completed", "abandoned"])
export type GoalStatus = typeof GoalStatus.Type

export const Goal = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix goal_" }),
  description: Schema.String,
  status: GoalStatus,
  adapter: Schema.NullOr(Schema.String).annotate({ description: "the adapter it was set from; null when not given" }),
  created_at: Timestamp,
  updated_at: Schema.optional(Timestamp).annotate({ description: "present after an update" })
}).annotate({ identifier: "Goal" })
export type Goal = typeof Goal.Type

/** A goal as the management API lists it: with the user who set it. */
export const UserGoal = Schema.Struct({
  ...Goal.fields,
  user_id: Schema.String,
  drift_count: Schema.Int.annotate({ description: "goal-drift signals the engine raised for this goal" }),
  last_drift_at: Schema.NullOr(Timestamp).annotate({ description: "when the latest of them came; null when none" })
}).annotate({ identifier: "UserGoal" })
export type UserGoal = typeof UserGoal.Type

/** A goal as the actor holds it. */
export interface GoalState extends Goal {
  readonly environment: Environment
}

export const maxDescriptionLength = 2000

/**
 * A user's active goals, per environment, at most: every prompt is compared with each of them
 * (goal drift), and the actor's state, written with each batch, holds them. As many as the
 * largest page of `GET /goals`, so one page lists them all.
 */
export const maxActiveGoals = 100

/** Closed goals the actor keeps (to reopen them), per user: the most recently closed. */
export const maxClosedGoals = 100

/** Why a description is refused (400), if it is: blank, or longer than the maximum. */
export const descriptionProblem = (description: string | undefined): string | undefined =>
  description !== undefined && (description.trim().length === 0 || description.length > maxDescriptionLength)
    ? `description: must be 1 to ${maxDescriptionLength} characters and not blank`
    : undefined

/**
 * The allowed transitions: active → completed | abandoned, and completed | abandoned → active
 * (reopen). Anything else, including a status to itself, is refused.
 */
export const canTransition = (from: GoalStatus, to: GoalStatus): boolean => from === "active" ? to !== "active" : to === "active"

/** Why a goal command is refused, decided by the fold (the actor owns goal state). */
export interface GoalRefusal {
  // The engine API answers invalid input with 400 (spec §7 lists no 422 for it).
  /** 409: the goal's state (or the user's active goals) does not allow it now. */
  readonly status: 404 | 400 | 409
  readonly code: "not_found" | "invalid_transition" | "invalid_parameters" | "too_many_goals"
  readonly message: string
}

/** What a goal command came to: the goal after it, or why it was refused. */
export type GoalOutcome =
  | { readonly _tag: "Goal"; readonly command_id: string; readonly goal: Goal }
  | { readonly _tag: "Refused"; readonly command_id: string; readonly refusal: GoalRefusal }

export const publicGoal = (g: GoalState): Goal => {
  const { environment: _e, ...goal } = g
  return goal
}
