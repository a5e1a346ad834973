import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Environment } from "../../domain/environments.ts"
import { EngineFeature, Plan } from "../../domain/plans.ts"
import { EngineAuth, Envelope, RequiredFeature } from "../contract.ts"
import { ContentPolicyGroup } from "./content-policy-api.ts"
import { GoalsGroup } from "./goals-api.ts"
import { withOtlpPaths } from "./otlp-openapi.ts"
import { HooksGroup } from "./hooks-api.ts"
import { EngineSessionsGroup } from "./sessions-api.ts"
import { SignalsGroup } from "./signals-api.ts"

export const Me = Schema.Struct({
  user_id: Schema.String,
  org_id: Schema.String,
  plan: Plan,
  environment: Environment,
  features: Schema.Array(EngineFeature).annotate({ description: "engine features the org's plan includes" })
})

export class IdentityGroup extends HttpApiGroup.make("identity")
  .add(
    HttpApiEndpoint.get("me", "/me", { success: Me })
      .annotate(RequiredFeature, "signals")
      .annotateMerge(OpenApi.annotations({
        description: "The user, org and plan a license key stands for; adapters call it to check their setup."
      }))
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
{}

export class EngineApi extends HttpApi.make("engine")
  .add(IdentityGroup, SignalsGroup, EngineSessionsGroup, GoalsGroup, ContentPolicyGroup, HooksGroup)
  .prefix("/engine/v1")
  .annotateMerge(OpenApi.annotations({
    title: "signal-engine engine API",
    version: "1.0.0",
    description: "Signal ingestion, sessions and goals for adapters. Authenticated with license keys.",
    transform: withOtlpPaths
  }))
{}
