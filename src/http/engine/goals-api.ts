import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, NotFound, ServiceUnavailable } from "../../domain/errors.ts"
import { Goal, GoalStatus, maxActiveGoals, maxDescriptionLength } from "../../domain/goals.ts"
import { documentedAtLeastOneField, matching, storableText } from "../../domain/text.ts"
import { EngineAuth, Envelope, PageQuery, RequiredFeature } from "../contract.ts"

// Length and blankness in the schema too, so the document says them (the handler's check stays,
// with its reason, for any other caller).
const Description = Schema.String.annotate({ description: `what the user is working on: 1 to ${maxDescriptionLength} characters, not blank` })
  .pipe(Schema.check(storableText, Schema.isMinLength(1), Schema.isMaxLength(maxDescriptionLength), matching(/\S/, "must not be blank")))

const transitions = "Transitions: active → completed or abandoned; completed or abandoned → active (reopen); " +
  "anything else, including a status to itself, is 409 invalid_transition (the goal's state does not allow it)."

export class GoalsGroup extends HttpApiGroup.make("goals")
  .add(
    HttpApiEndpoint.get("list", "/goals", { query: { limit: PageQuery.limit }, success: Schema.Struct({ goals: Schema.Array(Goal) }) })
      .annotate(RequiredFeature, "goals")
      .annotateMerge(OpenApi.annotations({
        description: `The authenticated user's active goals, oldest first: \`limit\` of them (default 20, at most 100). ` +
          `A user has at most ${maxActiveGoals} active goals, so \`limit=100\` lists them all.`
      })),
    HttpApiEndpoint.post("create", "/goals", {
      payload: Schema.Struct({
        description: Description,
        adapter: Schema.optionalKey(
          Schema.String.annotate({ description: "the adapter the goal is set from: 1 to 100 characters, as on signals" }).pipe(
            Schema.check(Schema.isMinLength(1), Schema.isMaxLength(100), storableText)
          )
        )
      }),
      success: Schema.Struct({ goal: Goal }).pipe(HttpApiSchema.status(201)),
      error: [BadRequest, Conflict, ServiceUnavailable]
    })
      .annotate(RequiredFeature, "goals")
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotateMerge(OpenApi.annotations({
        description: "Sets a new goal (status active). Goal commands go through the signal log to the user's actor, " +
          "as signals do; the answer comes once the actor applied it. Prompts are compared with the active goals to " +
          "detect goal drift; setting or changing a goal answers a drift, as a refocus-ack signal does: the off-goal " +
          "streak starts over."
      })),
    HttpApiEndpoint.patch("update", "/goals/:id", {
      params: { id: Schema.String },
      payload: Schema.Struct({
        status: Schema.optionalKey(GoalStatus),
        description: Schema.optionalKey(Description)
      }).pipe(Schema.check(documentedAtLeastOneField)).annotate({ description: "at least one field; only the fields sent change" }),
      success: Schema.Struct({ goal: Goal }),
      error: [NotFound, BadRequest, Conflict, ServiceUnavailable]
    })
      .annotate(RequiredFeature, "goals")
      .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
      .annotateMerge(OpenApi.annotations({ description: `Changes a goal's status or description. ${transitions}` }))
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Goals", description: transitions }))
{}
