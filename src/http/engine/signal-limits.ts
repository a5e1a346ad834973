import { Clock, Config, Context, Effect, Layer, Schedule } from "effect"
import { TooManyRequests } from "../../domain/errors.ts"
import { engineSignalBuckets, type SignalBucket } from "../../domain/plans.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { Metrics } from "../../observability/metrics.ts"
import { ResponseHeaders } from "../response-headers.ts"

interface Bucket {
  tokens: number
  at: number
}

/**
 * The engine API's limits: a token bucket per license key and one per org and environment
 * (src/domain/plans.ts), in signals. Kept in this node's memory, not the database: a signal's
 * request must not pay a round trip for it, and what they protect is this node's capacity (one
 * key flooding cannot slow the others it serves). Behind a balancer over N nodes a key can get
 * up to N times its limit. `ENGINE_RATE_LIMIT_SCALE` multiplies every limit (0 turns them off:
 * load tests). Every answer of the signal endpoints carries the key's X-RateLimit-* headers; a
 * request over a limit is refused whole (429, Retry-After), taking nothing.
 */
export class SignalLimits extends Context.Service<SignalLimits, {
  readonly take: (principal: LicensePrincipal, signals: number) => Effect.Effect<void, TooManyRequests>
  /**
   * Refuses at once, before the body is read, a request of a key or org with no signal left:
   * a flood that ignores Retry-After then costs no more than its headers.
   */
  readonly admit: (principal: LicensePrincipal) => Effect.Effect<void, TooManyRequests>
}>()("signal-engine/http/SignalLimits") {
  static readonly layer = Layer.effect(
    SignalLimits,
    Effect.gen(function*() {
      const clock = yield* Clock.Clock
      const scale = yield* Config.Number("ENGINE_RATE_LIMIT_SCALE").pipe(Config.withDefault(1))
      const buckets = new Map<string, Bucket>()
      const refusals = (yield* Metrics).rateLimited.labels({ api: "engine" })
      const scaled = (b: SignalBucket): SignalBucket => ({ perSecond: b.perSecond * scale, burst: Math.max(1, Math.round(b.burst * scale)) })
      // A plan's scaled limits, worked out once: every signal request asks for them.
      const byPlan = new Map<LicensePrincipal["plan"], { readonly key: SignalBucket; readonly org: SignalBucket }>()
      const limitsOf = (plan: LicensePrincipal["plan"]) => {
        let limits = byPlan.get(plan)
        if (limits === undefined) {
          const base = engineSignalBuckets(plan)
          limits = { key: scaled(base.key), org: scaled(base.org) }
          byPlan.set(plan, limits)
        }
        return limits
      }

      /** The bucket's tokens now (refilled since it was last touched). */
      const level = (id: string, limit: SignalBucket, now: number): Bucket => {
        const bucket = buckets.get(id) ?? { tokens: limit.burst, at: now }
        bucket.tokens = Math.min(limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * limit.perSecond)
        bucket.at = now
        buckets.set(id, bucket)
        return bucket
      }

      // A full bucket is the same as none: dropped, so idle keys cost no memory.
      yield* Effect.sync(() => {
        const now = clock.currentTimeMillisUnsafe()
        for (const [id, bucket] of buckets) if (now - bucket.at > 600_000) buckets.delete(id)
      }).pipe(Effect.repeat(Schedule.spaced("1 minute")), Effect.forkScoped)

      const take = (principal: LicensePrincipal, signals: number): Effect.Effect<void, TooManyRequests> => {
        if (scale <= 0) return Effect.void
        return Effect.gen(function*() {
          const headers = yield* ResponseHeaders
          const { key, org } = limitsOf(principal.plan)
          const now = clock.currentTimeMillisUnsafe()
          const mine = level(`key:${principal.keyId}`, key, now)
          const theirs = level(`org:${principal.orgId}:${principal.environment}`, org, now)
          const short = [
            { bucket: mine, limit: key, what: "this license key" },
            { bucket: theirs, limit: org, what: "this org" }
          ].find((b) => b.bucket.tokens < signals)
          if (short === undefined) {
            mine.tokens -= signals
            theirs.tokens -= signals
          }
          headers["x-ratelimit-limit"] = String(key.burst)
          headers["x-ratelimit-remaining"] = String(Math.floor(mine.tokens))
          headers["x-ratelimit-reset"] = String(Math.ceil((now + ((key.burst - mine.tokens) / key.perSecond) * 1000) / 1000))
          if (short === undefined) return
          const wait = Math.max(1, Math.ceil((Math.min(signals, short.limit.burst) - short.bucket.tokens) / short.limit.perSecond))
          headers["retry-after"] = String(wait)
          refusals.inc()
          return yield* TooManyRequests.of(
            signals > short.limit.burst
              ? `${signals} signals in one request are more than ${short.what} may send at once (${short.limit.burst}); send fewer per request`
              : `${short.what} sent more than ${short.limit.perSecond} signals a second (bursts of ${short.limit.burst}); retry in ${wait} s`,
            "rate_limited"
          )
        })
      }
      const admit = (principal: LicensePrincipal): Effect.Effect<void, TooManyRequests> => {
        if (scale <= 0) return Effect.void
        const limits = limitsOf(principal.plan)
        const now = clock.currentTimeMillisUnsafe()
        const empty = level(`key:${principal.keyId}`, limits.key, now).tokens < 1 ||
          level(`org:${principal.orgId}:${principal.environment}`, limits.org, now).tokens < 1
        return empty ? take(principal, 1) : Effect.void
      }
      return SignalLimits.of({ take, admit })
    })
  )
}
