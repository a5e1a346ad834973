import { Cache, Config, Context, Duration, Effect, Layer, Redacted, Schedule } from "effect"
import { apiKeyPattern, licenseKeyPattern } from "../domain/credentials.ts"
import { Forbidden, Unauthorized } from "../domain/errors.ts"
import type { Environment } from "../domain/environments.ts"
import { allowsLiveKeys, minimumPlanFor, type Plan, planHasFeature } from "../domain/plans.ts"
import type { ApiKeyPrincipal, LicensePrincipal } from "../domain/principal.ts"
import { hasScope } from "../domain/scopes.ts"
import { Tenancy } from "../store/tenancy-repo.ts"
import { ApiPrincipal, EngineAuth, EnginePrincipal, KeyHousekeeping, ManagementAuth, RequiredFeature, RequiredScope } from "./contract.ts"

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
        // Expired entries otherwise stay until their key is used again or the cache is full, so
        // every user who ever sent a signal would keep a principal in memory: enumerating the
        // keys drops the expired ones.
        const purge = Effect.all([Cache.keys(apiKeys), Cache.keys(licenseKeys)]).pipe(
          Effect.map(([a, b]) => {
            for (const _ of a);
            for (const _ of b);
          })
        )
        yield* purge.pipe(Effect.repeat(Schedule.spaced(Duration.max(ttl, Duration.seconds(1)))), Effect.forkScoped)

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

/** What both surfaces ask of a credential: present, valid, and not live on a plan without live keys. */
const requirePrincipal = <P extends { readonly environment: Environment; readonly plan: Plan }>(
  auth: Authentication<P>,
  credential: { readonly name: string; readonly code: string },
  liveOnLowerPlan = false
): Effect.Effect<P, Unauthorized | Forbidden> => {
  if (auth._tag === "Missing") {
    return Effect.fail(Unauthorized.of(`${credential.name} is required: Authorization: Bearer <${credential.name}>`, `missing_${credential.code}`))
  }
  if (auth._tag === "Invalid") return Effect.fail(Unauthorized.of(`the ${credential.name} is invalid or revoked`, `invalid_${credential.code}`))
  const { principal } = auth
  return principal.environment === "live" && !allowsLiveKeys(principal.plan) && !liveOnLowerPlan
    ? Effect.fail(liveKeyOnLowerPlan(principal.plan))
    : Effect.succeed(principal)
}

/** Management: a valid API key of the right environment and plan, holding the endpoint's scope. */
export const ManagementAuthLive = Layer.effect(
  ManagementAuth,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    return ManagementAuth.of({
      apiKey: (httpEffect, { credential, endpoint }) =>
        Effect.gen(function*() {
          const auth = yield* authenticator.apiKey(Redacted.value(credential))
          const principal = yield* requirePrincipal(
            auth,
            { name: "API key", code: "api_key" },
            Context.getOrUndefined(endpoint.annotations, KeyHousekeeping) === true
          )
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
          const principal = yield* requirePrincipal(auth, { name: "license key", code: "license_key" })
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
