import { Config, Context, Duration, Effect, Layer, Option, Queue, Redacted, Schedule } from "effect"
import { HttpServerRequest } from "effect/http"
import { apiKeyPattern, licenseKeyPattern } from "../domain/credentials.ts"
import { Forbidden, Unauthorized } from "../domain/errors.ts"
import type { Environment } from "../domain/environments.ts"
import { fleetCredentialPattern, type FleetPrincipal } from "../domain/fleet.ts"
import type { FleetMember } from "../store/fleet-repo.ts"
import { allowsLiveKeys, type EngineFeature, minimumPlanFor, type Plan, planHasFeature } from "../domain/plans.ts"
import type { ApiKeyPrincipal, LicensePrincipal } from "../domain/principal.ts"
import { RequestFacts } from "../observability/request-facts.ts"
import { SignalLimits } from "./engine/signal-limits.ts"
import { hasScope } from "../domain/scopes.ts"
import { visibilityFor } from "../domain/roles.ts"
import { RuleCache } from "../engine/rule-cache.ts"
import { Tenancy } from "../store/tenancy-repo.ts"
import { isDatabaseUnavailable } from "../store/database-health.ts"
import { makeKeyCache } from "./key-cache.ts"
import { bearerCredential } from "./bearer.ts"
import { authenticateSession } from "./session-auth.ts"
import { DashboardSessions } from "../store/dashboard-sessions-repo.ts"
import { ApiPrincipal, EngineAuth, EnginePrincipal, KeyHousekeeping, ManagementAuth, RequiredFeature, RequiredScope } from "./contract.ts"

export type Authentication<P> =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Invalid" }
  | { readonly _tag: "Valid"; readonly principal: P }

const missing = { _tag: "Missing" } as const
const invalid = { _tag: "Invalid" } as const

/**
 * Resolves credentials to principals. Lookups are cached (AUTH_CACHE_TTL, default 10 minutes), and
 * the whole cache is dropped whenever the database reports a committed change to the rows a
 * principal is made of (keys, users, team memberships, orgs: migration 0015), so a revoked key or a
 * changed setting takes effect on every node as soon as the notice arrives. While a node cannot
 * listen (its connection lost), what it looks up is kept 5 s at most, and all of it is dropped
 * when it listens again. Malformed keys are refused without a query.
 *
 * While the database is out of reach, a key's last answer stands in for its lookup if it arrived
 * at most AUTH_OUTAGE_GRACE (default 10 minutes) ago: a revocation committed before the outage was
 * announced and dropped it; none can commit during it. Signals then go on being accepted over
 * Kafka; unknown keys are answered 503 database_unavailable.
 */
export class Authenticator extends Context.Service<Authenticator, {
  readonly apiKey: (credential: string) => Effect.Effect<Authentication<ApiKeyPrincipal>>
  readonly licenseKey: (credential: string) => Effect.Effect<Authentication<LicensePrincipal>>
  readonly fleetCredential: (credential: string) => Effect.Effect<Authentication<FleetPrincipal>>
  /** The org's active user of a claimed e-mail (any letter case), cached as keys are. */
  readonly fleetMember: (orgId: string, email: string) => Effect.Effect<FleetMember | undefined>
  /**
   * Drops what every key resolved to, and the lookups in flight from being kept: this node made
   * a change that may alter them, and answers after the drop, so its next request sees the change
   * without waiting for the database's notice.
   */
  readonly forget: Effect.Effect<void>
}>()("signal-engine/http/Authenticator") {
  static readonly layer = (options: { readonly apiKeyPrefix: string }) =>
    Layer.effect(
      Authenticator,
      Effect.gen(function*() {
        const tenancy = yield* Tenancy
        const ttl = yield* Config.Duration("AUTH_CACHE_TTL").pipe(Config.withDefault(Duration.minutes(10)))
        const ttlMs = Duration.toMillis(ttl)
        const unheardTtlMs = Math.min(ttlMs, 5_000)
        const grace = yield* Config.Duration("AUTH_OUTAGE_GRACE").pipe(Config.withDefault(Duration.minutes(10)))
        // Only where changes are heard (a cache at all): with none, nothing would drop a revoked key's answer.
        const outage = { outageGraceMs: ttlMs > 0 ? Duration.toMillis(grace) : 0, isOutage: isDatabaseUnavailable }
        // Whether changes are heard now; read when a lookup answers, to decide how long it is kept.
        let listening = false
        const timeToLiveMs = () => (listening ? ttlMs : unheardTtlMs)
        const apiKeys = makeKeyCache({ lookup: tenancy.authenticateApiKey, capacity: 10_000, timeToLiveMs, ...outage })
        const licenseKeys = makeKeyCache({ lookup: tenancy.authenticateLicenseKey, capacity: 100_000, timeToLiveMs, ...outage })
        const fleetKeys = makeKeyCache({ lookup: tenancy.authenticateFleetCredential, capacity: 1_000, timeToLiveMs, ...outage })
        // Keyed by org and lower-cased e-mail; a miss is kept too, and dropped when a user is
        // created (its insert notifies, migration 0028).
        const fleetMembers = makeKeyCache({
          lookup: (key: string) => {
            const at = key.indexOf("\n")
            return tenancy.fleetMember(key.slice(0, at), key.slice(at + 1))
          },
          capacity: 100_000,
          timeToLiveMs,
          ...outage
        })
        const caches = [apiKeys, licenseKeys, fleetKeys, fleetMembers]
        const forgetAll = Effect.sync(() => {
          for (const cache of caches) cache.clear()
        })
        // Users who stopped sending keep nothing in the cache for long.
        const sweepEvery = Duration.max(Duration.min(ttl, Duration.minutes(1)), Duration.seconds(1))
        yield* Effect.sync(() => {
          for (const cache of caches) cache.sweep()
        }).pipe(Effect.repeat(Schedule.spaced(sweepEvery)), Effect.forkScoped)

        if (Duration.isGreaterThan(ttl, Duration.zero)) {
          // An entry in the cache when a change commits may be what the change made wrong: drop
          // them all, and the lookups in flight from being kept.
          // On (re)connecting, changes made while nobody listened were not heard: the same.
          const listen = Effect.scoped(Effect.gen(function*() {
            const changes = yield* tenancy.principalChanges
            listening = true
            yield* forgetAll
            for (;;) {
              yield* Queue.takeAll(changes)
              yield* forgetAll
            }
          })).pipe(
            // Unheard from now on: look every key up again, keeping the answers only to stand in
            // while the database is out of reach (which is most often why the notices stopped).
            Effect.ensuring(Effect.sync(() => {
              listening = false
              for (const cache of caches) cache.expire()
            })),
            Effect.catchCause((cause) =>
              Effect.logWarning("auth: lost the notices of key and user changes; caching lookups 5 s until they are back", cause).pipe(
                Effect.andThen(Effect.sleep("1 second"))
              )
            ),
            Effect.forever
          )
          yield* Effect.forkScoped(listen)
        }

        const apiKeyFormat = apiKeyPattern(options.apiKeyPrefix)
        const apiKey = (credential: string): Effect.Effect<Authentication<ApiKeyPrincipal>> => {
          if (credential === "") return Effect.succeed(missing)
          if (!apiKeyFormat.test(credential)) return Effect.succeed(invalid)
          return Effect.map(apiKeys.get(credential), (principal) => (principal ? { _tag: "Valid", principal } : invalid))
        }
        const licenseKey = (credential: string): Effect.Effect<Authentication<LicensePrincipal>> => {
          if (credential === "") return Effect.succeed(missing)
          if (!licenseKeyPattern.test(credential)) return Effect.succeed(invalid)
          return Effect.map(licenseKeys.get(credential), (principal) => (principal ? { _tag: "Valid", principal } : invalid))
        }
        const fleetCredential = (credential: string): Effect.Effect<Authentication<FleetPrincipal>> => {
          if (credential === "") return Effect.succeed(missing)
          if (!fleetCredentialPattern.test(credential)) return Effect.succeed(invalid)
          return Effect.map(fleetKeys.get(credential), (principal) => (principal ? { _tag: "Valid", principal } : invalid))
        }
        const fleetMember = (orgId: string, email: string) => fleetMembers.get(`${orgId}\n${email.toLowerCase()}`)
        return Authenticator.of({ apiKey, licenseKey, fleetCredential, fleetMember, forget: forgetAll })
      })
    )
}

const liveKeyOnLowerPlan = (plan: string) =>
  Forbidden.of(`live keys require the team plan or higher; this org is on ${plan}. Use a test key.`, "plan_upgrade_required")

/** What both surfaces ask of a credential: present, valid, and not live on a plan without live keys. */
export const requirePrincipal = <P extends { readonly environment: Environment; readonly plan: Plan }>(
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

/**
 * A signed-in person's principal for one endpoint: what their role sees through it, or undefined
 * when the role may not call it (src/domain/roles.ts decides; a person's scopes do not).
 */
const asRole = (principal: ApiKeyPrincipal, operation: string): ApiKeyPrincipal | undefined => {
  const person = principal.person!
  const visibility = visibilityFor(operation, person.role)
  return visibility === undefined ? undefined : { ...principal, person: { ...person, visibility } }
}

/**
 * Management: a valid API key of the right environment and plan, holding the endpoint's scope.
 *
 * Read-your-writes: a change answered by the management API (rules, keys, users, teams,
 * memberships, org settings) is in force on this node before the answer leaves. After every
 * request that may have changed something, the key lookups are dropped and the rules reloaded;
 * the other nodes hear of it from the database's notices (src/http/auth.ts, src/engine/rule-cache.ts).
 */
export const ManagementAuthLive = Layer.effect(
  ManagementAuth,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const rules = yield* RuleCache
    const sessions = yield* DashboardSessions
    const publicBase = yield* Config.option(Config.String("PUBLIC_BASE_URL"))
    const publicOrigin = Option.getOrUndefined(Option.map(publicBase, (base) => new URL(base).origin))
    const changed = Effect.andThen(authenticator.forget, rules.refresh).pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not reload rules after a change; the notice will", cause))
    )
    type Served = Parameters<ManagementAuth["Service"]["apiKey"]>
    const serveAs = (caller: ApiKeyPrincipal, [httpEffect, { endpoint, group }]: Served) => {
      const principal = caller.person === undefined ? caller : asRole(caller, `${group.identifier}.${endpoint.identifier}`)
      if (principal === undefined) {
        return Effect.fail(Forbidden.of(
          `the ${caller.person!.role} role does not allow ${endpoint.method} ${endpoint.path}`,
          "insufficient_role"
        ))
      }
      const required = Context.getOrUndefined(endpoint.annotations, RequiredScope)
      if (principal.person === undefined && required && !hasScope(principal.scopes, required.resource, required.access)) {
        return Effect.fail(Forbidden.of(`this API key lacks the ${required.resource}:${required.access} scope`, "insufficient_scope"))
      }
      const served = Effect.provideService(httpEffect, ApiPrincipal, principal)
      return endpoint.method === "GET" ? served : Effect.ensuring(served, changed)
    }
    const viaKey = (credential: string, served: Served) =>
      Effect.gen(function*() {
        const auth = yield* authenticator.apiKey(credential)
        const principal = yield* requirePrincipal(
          auth,
          { name: "API key", code: "api_key" },
          Context.getOrUndefined(served[1].endpoint.annotations, KeyHousekeeping) === true
        )
        return yield* serveAs(principal, served)
      })
    return ManagementAuth.of({
      apiKey: (httpEffect, options) => viaKey(Redacted.value(options.credential), [httpEffect, options]),
      // Tried after the key: a request with a key, or with neither, gets the key's own answer.
      session: (httpEffect, options) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const key = bearerCredential(request.headers.authorization)
          const sessionId = Redacted.value(options.credential)
          if (key !== "" || sessionId === "") return yield* viaKey(key, [httpEffect, options])
          const principal = yield* authenticateSession(sessions, sessionId, request, publicOrigin)
          return yield* serveAs(principal, [httpEffect, options])
        })
    })
  })
)

/**
 * The engine's check of a license key: valid, not live on a plan without live keys, on a plan
 * that includes `feature` (when the endpoint names one).
 */
export const authorizeEngine = (
  authenticator: Authenticator["Service"],
  credential: string,
  feature: EngineFeature | undefined
): Effect.Effect<LicensePrincipal, Unauthorized | Forbidden> =>
  Effect.flatMap(
    authenticator.licenseKey(credential),
    (auth) =>
      Effect.flatMap(requirePrincipal(auth, { name: "license key", code: "license_key" }), (principal) =>
        feature && !planHasFeature(principal.plan, feature)
          ? Effect.fail(Forbidden.of(
            `${feature} is not available on the ${principal.plan} plan (requires ${minimumPlanFor(feature)} or higher)`,
            "feature_not_available"
          ))
          : Effect.map(Effect.service(RequestFacts), (facts) => {
            facts.org_id = principal.orgId
            facts.user_id = principal.userId
            return principal
          }))
  )

/**
 * Engine: a valid license key, on a plan that includes the endpoint's feature; for the signal
 * endpoints, a key and org with signals left (checked before the body is read).
 */
export const EngineAuthLive = Layer.effect(
  EngineAuth,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const limits = yield* SignalLimits
    return EngineAuth.of({
      licenseKey: (httpEffect, { credential, endpoint }) => {
        const feature = Context.getOrUndefined(endpoint.annotations, RequiredFeature)
        return Effect.flatMap(
          authorizeEngine(authenticator, Redacted.value(credential), feature),
          (principal) =>
            Effect.andThen(
              feature === "signals" ? limits.admit(principal) : Effect.void,
              Effect.provideService(httpEffect, EnginePrincipal, principal)
            )
        )
      }
    })
  })
).pipe(Layer.provide(SignalLimits.layer))
