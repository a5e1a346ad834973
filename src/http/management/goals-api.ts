import { Schema } from "effect"
import { HttpApiGroup } from "effect/http-api"
import { GoalStatus, UserGoal } from "../../domain/goals.ts"
import { listEndpoint, managementGroup, requires } from "./endpoints.ts"

/** Users' goals, read-only here: users set and close them from their tools (engine API). */
export class GoalsGroup extends HttpApiGroup.make("goals")
  .add(
    listEndpoint("/goals", UserGoal, {
      user_id: Schema.optional(Schema.String.annotate({ description: "only this user's goals" })),
      status: Schema.optional(GoalStatus.annotate({ description: "`active`, `completed` or `abandoned`" }))
    }).annotateMerge(requires(
      "sessions",
      "read",
      "Extension: the goals of the org's users in the key's environment, newest first, each with " +
        "how often the engine saw the user drift from it (goal-drift signals; also GET /events?type=goal-drift)."
    ))
  )
  .pipe(managementGroup({ title: "Goals", description: "What users said they are working on (engine API /goals)" }))
{}
