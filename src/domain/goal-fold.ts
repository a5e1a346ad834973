import { afterGoalCommand, keepsContext } from "./drift-goal-commands.ts"
import { canTransition, descriptionProblem, type GoalRefusal, type GoalState, maxActiveGoals, maxClosedGoals, publicGoal } from "./goals.ts"
import type { Position } from "./projection-rows.ts"
import type { GoalRecord } from "./records.ts"
import type { FoldResult } from "./fold-result.ts"
import type { UserState } from "./user-state.ts"

const refused = (r: GoalRecord, refusal: GoalRefusal, state: UserState): FoldResult => ({
  state,
  sessions: [],
  events: [],
  notices: [],
  goalOutcome: { _tag: "Refused", command_id: r.command_id, refusal }
})

/**
 * Keeps the `maxClosedGoals` most recently closed goals (of both environments): older ones can no
 * longer be reopened (404), and stay in the goals projection as they were.
 */
const forgetOldestClosed = (goals: Record<string, GoalState>) => {
  const closed = Object.values(goals).filter((g) => g.status !== "active")
  if (closed.length <= maxClosedGoals) return
  closed.sort((a, b) => (a.updated_at ?? a.created_at).localeCompare(b.updated_at ?? b.created_at) || a.id.localeCompare(b.id))
  for (const g of closed.slice(0, closed.length - maxClosedGoals)) delete goals[g.id]
}

/**
 * Goal commands. The actor decides them, in log order, so two concurrent updates of a goal are
 * judged one after the other; a refused command changes nothing.
 */
export const foldGoal = (state: UserState, r: GoalRecord, at: Position): FoldResult => {
  const existing = state.goals?.[r.goal_id]
  const activeCount = () => Object.values(state.goals ?? {}).filter((g) => g.environment === r.environment && g.status === "active").length
  const tooMany: GoalRefusal = {
    status: 409,
    code: "too_many_goals",
    message: `a user has at most ${maxActiveGoals} active goals; complete or abandon one first`
  }
  let goal: GoalState
  if (r.op === "create") {
    // A create redelivered under the same id is the same goal.
    goal = existing ?? {
      id: r.goal_id,
      environment: r.environment,
      description: r.description ?? "",
      status: "active",
      adapter: r.adapter ?? null,
      created_at: r.ts
    }
    if (existing) return { state, sessions: [], events: [], notices: [], goalOutcome: { _tag: "Goal", command_id: r.command_id, goal: publicGoal(existing) } }
    if (activeCount() >= maxActiveGoals) return refused(r, tooMany, state)
  } else {
    if (!existing || existing.environment !== r.environment) {
      return refused(r, { status: 404, code: "not_found", message: `goal ${r.goal_id} not found` }, state)
    }
    if (r.status !== undefined && !canTransition(existing.status, r.status)) {
      return refused(r, {
        status: 409,
        code: "invalid_transition",
        message: `status: a goal cannot go from ${existing.status} to ${r.status} (allowed: active → completed or abandoned; completed or abandoned → active)`
      }, state)
    }
    const problem = descriptionProblem(r.description)
    if (problem !== undefined) return refused(r, { status: 400, code: "invalid_parameters", message: problem }, state)
    if (r.status === "active" && activeCount() >= maxActiveGoals) return refused(r, tooMany, state)
    goal = {
      ...existing,
      ...(r.status !== undefined ? { status: r.status } : {}),
      ...(r.description !== undefined ? { description: r.description } : {}),
      updated_at: r.ts
    }
  }
  const goals = { ...state.goals, [goal.id]: goal }
  if (goal.status !== "active") forgetOldestClosed(goals)
  // A goal set, changed or closed answers a drift; a command accepted before context-2 did not.
  const activeIn = (all: Readonly<Record<string, GoalState>>) => Object.values(all).filter((g) => g.environment === r.environment && g.status === "active")
  const keepContext = r.drift_method !== undefined &&
    keepsContext(state, r.environment, r.drift_method, {
      before: activeIn(state.goals ?? {}),
      after: activeIn(goals),
      set: r.op === "create" ? goal : undefined
    })
  const answered = r.drift_method === undefined ? state : afterGoalCommand(state, r.environment, keepContext)
  return {
    state: { ...answered, goals },
    sessions: [],
    events: [],
    notices: [],
    goals: [{ ...goal, org_id: r.org_id, user_id: r.user_id, log_partition: at.partition }],
    goalOutcome: { _tag: "Goal", command_id: r.command_id, goal: publicGoal(goal) }
  }
}
