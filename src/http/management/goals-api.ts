import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { GoalStatus, UserGoal } from "../../domain/goals.ts"
import { Envelope, ManagementAuth, PageQuery, pageOf, RequiredScope } from "../contract.ts"

/** Users' goals, read-only here: users set and close them from their tools (engine API). */
export class GoalsGroup extends HttpApiGroup.make("goals")
  .add(
    HttpApiEndpoint.get("list", "/goals", {
      query: {
        ...PageQuery,
        user_id: Schema.optional(Schema.String.annotate({ description: "only this user's goals" })),
        status: Schema.optional(GoalStatus.annotate({ description: "`active`, `completed` or `abandoned`" }))
      },
      success: pageOf(UserGoal)
    })
      .annotate(RequiredScope, { resource: "sessions", access: "read" })
      .annotateMerge(OpenApi.annotations({
        description: "Extension: the goals of the org's users in the key's environment, newest first, each with " +
          "how often the engine saw the user drift from it (goal-drift signals; also GET /events?type=goal-drift)."
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Goals", description: "What users said they are working on (engine API /goals)" }))
{}
