import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { EngineFeature, planHasFeature } from "../../domain/plans.ts"
import { EnginePrincipal } from "../contract.ts"
import { EngineApi } from "./api.ts"
import { ContentPolicyHandlers } from "./content-policy-handlers.ts"
import { GoalsHandlers } from "./goals-handlers.ts"
import { HooksHandlers } from "./hooks-handlers.ts"
import { SignalsHandlers } from "./signals-handlers.ts"
import { EngineSessionsHandlers } from "./sessions-handlers.ts"

export const IdentityHandlers = HttpApiBuilder.group(
  EngineApi,
  "identity",
  (handlers) =>
    Effect.succeed(handlers.handle("me", () =>
      EnginePrincipal.use((p) =>
        Effect.succeed({
          user_id: p.userId,
          org_id: p.orgId,
          plan: p.plan,
          environment: p.environment,
          features: EngineFeature.literals.filter((f) => planHasFeature(p.plan, f))
        })
      )))
)

export const EngineHandlers = Layer.mergeAll(
  IdentityHandlers,
  SignalsHandlers,
  EngineSessionsHandlers,
  GoalsHandlers,
  ContentPolicyHandlers,
  HooksHandlers
)
