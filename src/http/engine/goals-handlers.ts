import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BadRequest, Conflict, NotFound, ServiceUnavailable } from "../../domain/errors.ts"
import { descriptionProblem, type GoalOutcome } from "../../domain/goals.ts"
import { makeId } from "../../domain/ids.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { driftMethod } from "../../domain/drift.ts"
import type { GoalRecord } from "../../domain/records.ts"
import { Ingress } from "../../engine/ingress.ts"
import { Goals } from "../../store/goals-repo.ts"
import { EnginePrincipal } from "../contract.ts"
import { EngineApi } from "./api.ts"

/** Only a change certainly not in the log is "not changed"; an append that timed out may still land. */
const logUnavailable = (e: { readonly message: string; readonly notWritten?: boolean }) =>
  Effect.fail(
    e.notWritten === true
      ? ServiceUnavailable.of(`the signal log is unavailable (${e.message}); the goal was not changed: retry`, "log_unavailable")
      : ServiceUnavailable.of(`the signal log did not confirm the append (${e.message}); the goal change may be recorded`, "outcome_unknown")
  )

const command = (p: LicensePrincipal, now: number, fields: Pick<GoalRecord, "op" | "goal_id"> & Partial<GoalRecord>): GoalRecord => ({
  v: 1,
  kind: "goal",
  org_id: p.orgId,
  environment: p.environment,
  user_id: p.userId,
  ts: new Date(now).toISOString(),
  command_id: makeId("gcmd", now),
  drift_method: driftMethod,
  ...fields
})

/** The goal a decided command came to, or its refusal as the API's error. */
const answer = (outcome: GoalOutcome) =>
  outcome._tag === "Goal"
    ? Effect.succeed({ goal: outcome.goal })
    : outcome.refusal.status === 404
    ? Effect.fail(NotFound.of(outcome.refusal.message, outcome.refusal.code))
    : outcome.refusal.status === 409
    ? Effect.fail(Conflict.of(outcome.refusal.message, outcome.refusal.code))
    : Effect.fail(BadRequest.of(outcome.refusal.message, outcome.refusal.code))

export const GoalsHandlers = HttpApiBuilder.group(
  EngineApi,
  "goals",
  Effect.fn(function*(handlers) {
    const ingress = yield* Ingress
    const goals = yield* Goals
    return handlers
      .handle("list", ({ query }) =>
        EnginePrincipal.use((p) =>
          Effect.map(
            goals.active({ orgId: p.orgId, environment: p.environment }, p.userId, query.limit ?? defaultPageSize),
            (list) => ({ goals: list })
          )
        ))
      .handle("create", ({ payload }) =>
        EnginePrincipal.use((p) =>
          Effect.gen(function*() {
            const problem = descriptionProblem(payload.description)
            if (problem) return yield* BadRequest.of(problem, "invalid_parameters")
            const record = command(p, yield* Clock.currentTimeMillis, {
              op: "create",
              goal_id: makeId("goal"),
              description: payload.description,
              ...(payload.adapter !== undefined ? { adapter: payload.adapter } : {})
            })
            const outcome = yield* ingress.submitGoal(record).pipe(Effect.catchTag("LogUnavailable", logUnavailable))
            if (Option.isSome(outcome)) return yield* answer(outcome.value)
            // Not applied within the wait, but durable, and a create is never refused: it is this goal.
            return {
              goal: { id: record.goal_id, description: payload.description, status: "active" as const, adapter: payload.adapter ?? null, created_at: record.ts }
            }
          })
        ))
      .handle("update", ({ params, payload }) =>
        EnginePrincipal.use((p) =>
          Effect.gen(function*() {
            if (payload.status === undefined && payload.description === undefined) {
              return yield* BadRequest.of("nothing to change: send status, description or both", "invalid_parameters")
            }
            const problem = descriptionProblem(payload.description)
            if (problem) return yield* BadRequest.of(problem, "invalid_parameters")
            const record = command(p, yield* Clock.currentTimeMillis, {
              op: "update",
              goal_id: params.id,
              ...(payload.status !== undefined ? { status: payload.status } : {}),
              ...(payload.description !== undefined ? { description: payload.description } : {})
            })
            const outcome = yield* ingress.submitGoal(record).pipe(Effect.catchTag("LogUnavailable", logUnavailable))
            if (Option.isSome(outcome)) return yield* answer(outcome.value)
            return yield* ServiceUnavailable.of(
              "the change was accepted but not applied within the wait; GET /goals shows it once applied",
              "pending"
            )
          })
        ))
  })
)
