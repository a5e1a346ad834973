import { Cache, Config, Context, Duration, Effect, Layer, Redacted } from "effect"
import { apiKeyPattern, licenseKeyPattern } from "../domain/credentials.ts"
import { Forbidden, Unauthorized } from "../domain/errors.ts"
import { allowsLiveKeys, minimumPlanFor, planHasFeature } from "../domain/plans.ts"
import type { ApiKeyPrincipal, LicensePrincipal } from "../domain/principal.ts"
import { hasScope } from "../domain/scopes.ts"
import { Tenancy } from "../store/tenancy-repo.ts"
import { ApiPrincipal, EngineAuth, EnginePrincipal, ManagementAuth, RequiredFeature, RequiredScope } from "./contract.ts"

export type Authentication<P> =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Invalid" }
  | { readonly _tag: "Valid"; readonly principal: P }

const missing = { _tag: "Missing" } as const
const invalid = { _tag: "Invalid" } as const

/**
 * Resolves credentials to principals. Lookups are cached briefly (AUTH_CACHE_TTL, default 5 s)
 * so a burst of requests costs one query; a revoked key stops working within that time.
 * Malformed keys are refused without a query.
 */
export class Authenticator extends Context.Service<Authenticator, {
  readonly apiKey: (credential: string) => Effect.Effect<Authentication<ApiKeyPrincipal>>
  readonly licenseKey: (credential: string) => Effect.Effect<Authentication<LicensePrincipal>>
}>()("signal-engine/http/Authenticator") {
  static readonly layer = (options: { readonly apiKeyPrefix: string }) =>
    Layer.effect(
      Authenticator,
      Effect.gen(function*() {
        const tenancy = yield* Tenancy
        const ttl = yield* Config.Duration("AUTH_CACHE_TTL").pipe(Config.withDefault(Duration.seconds(5)))
        const apiKeys = yield* Cache.make({ lookup: tenancy.authenticateApiKey, capacity: 10_000, timeToLive: ttl })
        const licenseKeys = yield* Cache.make({ lookup: tenancy.authenticateLicenseKey, capacity: 100_000, timeToLive: ttl })
        const apiKeyFormat = apiKeyPattern(options.apiKeyPrefix)

        const apiKey = (credential: string): Effect.Effect<Authentication<ApiKeyPrincipal>> => {
          if (credential === "") return Effect.succeed(missing)
          if (!apiKeyFormat.test(credential)) return Effect.succeed(invalid)
          return Effect.map(Cache.get(apiKeys, credential), (principal) => (principal ? { _tag: "Valid", principal } : invalid))
        }
        const licenseKey = (credential: string): Effect.Effect<Authentication<LicensePrincipal>> => {
          if (credential === "") return Effect.succeed(missing)
          if (!licenseKeyPattern.test(credential)) return Effect.succeed(invalid)
          return Effect.map(Cache.get(licenseKeys, credential), (principal) => (principal ? { _tag: "Valid", principal } : invalid))
        }
        return Authenticator.of({ apiKey, licenseKey })
      })
    )
}

const liveKeyOnLowerPlan = (plan: string) =>
  Forbidden.of(`live keys require the team plan or higher; this org is on ${plan}. Use a test key.`, "plan_upgrade_required")

/** Management: a valid API key of the right environment and plan, holding the endpoint's scope. */
export const ManagementAuthLive = Layer.effect(
  ManagementAuth,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    return ManagementAuth.of({
      apiKey: (httpEffect, { credential, endpoint }) =>
        Effect.gen(function*() {
          const auth = yield* authenticator.apiKey(Redacted.value(credential))
          if (auth._tag === "Missing") {
            return yield* Unauthorized.of("an API key is required: Authorization: Bearer <API key>", "missing_api_key")
          }
          if (auth._tag === "Invalid") return yield* Unauthorized.of("the API key is invalid or revoked", "invalid_api_key")
          const principal = auth.principal
          if (principal.environment === "live" && !allowsLiveKeys(principal.plan)) {
            return yield* liveKeyOnLowerPlan(principal.plan)
          }
          const required = Context.getOrUndefined(endpoint.annotations, RequiredScope)
          if (required && !hasScope(principal.scopes, required.resource, required.access)) {
            return yield* Forbidden.of(
              `this API key lacks the ${required.resource}:${required.access} scope`,
              "insufficient_scope"
            )
          }
          return yield* Effect.provideService(httpEffect, ApiPrincipal, principal)
        })
    })
  })
)

/** Engine: a valid license key, on a plan that includes the endpoint's feature. */
export const EngineAuthLive = Layer.effect(
  EngineAuth,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    return EngineAuth.of({
      licenseKey: (httpEffect, { credential, endpoint }) =>
        Effect.gen(function*() {
          const auth = yield* authenticator.licenseKey(Redacted.value(credential))
          if (auth._tag === "Missing") {
            return yield* Unauthorized.of("a license key is required: Authorization: Bearer <license key>", "missing_license_key")
          }
          if (auth._tag === "Invalid") return yield* Unauthorized.of("the license key is invalid or revoked", "invalid_license_key")
          const principal = auth.principal
          if (principal.environment === "live" && !allowsLiveKeys(principal.plan)) {
            return yield* liveKeyOnLowerPlan(principal.plan)
          }
          const feature = Context.getOrUndefined(endpoint.annotations, RequiredFeature)
          if (feature && !planHasFeature(principal.plan, feature)) {
            return yield* Forbidden.of(
              `${feature} is not available on the ${principal.plan} plan (requires ${minimumPlanFor(feature)} or higher)`,
              "feature_not_available"
            )
          }
          return yield* Effect.provideService(httpEffect, EnginePrincipal, principal)
        })
    })
  })
)
