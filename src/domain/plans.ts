import { Schema } from "effect"

/**
 * The plan / feature matrix. This module is the one place that says what each plan may do;
 * docs/decisions.md repeats it for operators.
 */
export const Plan = Schema.Literals(["lite", "developer", "professional", "team", "business", "enterprise"])
export type Plan = typeof Plan.Type

const rank: Record<Plan, number> = {
  lite: 0,
  developer: 1,
  professional: 2,
  team: 3,
  business: 4,
  enterprise: 5
}

export const planAtLeast = (plan: Plan, minimum: Plan): boolean => rank[plan] >= rank[minimum]

/** Live credentials (API and license keys) require the Team plan or higher (spec §5). */
export const allowsLiveKeys = (plan: Plan): boolean => planAtLeast(plan, "team")

/** Engine features gated by plan. A request to a gated feature on a lower plan gets 403. */
export const EngineFeature = Schema.Literals(["signals", "sessions", "goals", "goal_drift", "anomalies"])
export type EngineFeature = typeof EngineFeature.Type

const featureMinimumPlan: Record<EngineFeature, Plan> = {
  signals: "lite",
  sessions: "lite",
  goals: "developer",
  goal_drift: "professional",
  anomalies: "team"
}

export const planHasFeature = (plan: Plan, feature: EngineFeature): boolean => planAtLeast(plan, featureMinimumPlan[feature])

export const minimumPlanFor = (feature: EngineFeature): Plan => featureMinimumPlan[feature]

/** One rate-limit window: at most `limit` requests per `windowSeconds`. */
export interface RateWindow {
  readonly name: "minute" | "hour" | "day"
  readonly windowSeconds: number
  readonly limit: number
}

const minute = (limit: number): RateWindow => ({ name: "minute", windowSeconds: 60, limit })
const hour = (limit: number): RateWindow => ({ name: "hour", windowSeconds: 3_600, limit })
const day = (limit: number): RateWindow => ({ name: "day", windowSeconds: 86_400, limit })

/** Per-org overrides (enterprise contracts, or a business plan's custom daily cap). */
export interface RateLimitOverrides {
  readonly perMinute: number | null
  readonly perHour: number | null
  readonly perDay: number | null
}

/**
 * Management API limits by plan (spec §8). The first window is the primary limit, reported in
 * the X-RateLimit-* headers while it is the binding one.
 */
export const managementRateWindows = (plan: Plan, overrides: RateLimitOverrides): ReadonlyArray<RateWindow> => {
  const custom = [
    overrides.perMinute !== null ? minute(overrides.perMinute) : undefined,
    overrides.perHour !== null ? hour(overrides.perHour) : undefined,
    overrides.perDay !== null ? day(overrides.perDay) : undefined
  ].filter((w): w is RateWindow => w !== undefined)
  if (custom.length > 0) return custom
  switch (plan) {
    case "lite":
    case "developer":
    case "professional":
      return [minute(60), day(1_000)]
    case "team":
      return [minute(600), day(100_000)]
    case "business":
    case "enterprise":
      return [hour(10_000)]
  }
}

/**
 * Requests that carry no valid credential are limited per client address: `perMinute`, 60 unless
 * the operator set MANAGEMENT_ANONYMOUS_RATE_LIMIT (many people behind one address).
 */
export const anonymousRateWindows = (perMinute = 60): ReadonlyArray<RateWindow> => [minute(perMinute)]

/** A token bucket: `burst` signals at once, refilled at `perSecond`. */
export interface SignalBucket {
  readonly perSecond: number
  readonly burst: number
}

/**
 * Engine API limits by plan, in signals (a batch counts its signals), per license key and per
 * org and environment (extension; the spec leaves engine limits unshown). Far above what a
 * person's tools send (a busy agent sends a few signals a second; an adapter's spool drains in
 * batches of at most 500), they stop one key or one org from taking a node's capacity from the
 * others.
 */
export const engineSignalBuckets = (plan: Plan): { readonly key: SignalBucket; readonly org: SignalBucket } => {
  switch (plan) {
    case "lite":
    case "developer":
    case "professional":
      return { key: { perSecond: 20, burst: 1_000 }, org: { perSecond: 200, burst: 10_000 } }
    case "team":
      return { key: { perSecond: 50, burst: 1_000 }, org: { perSecond: 1_000, burst: 50_000 } }
    case "business":
    case "enterprise":
      return { key: { perSecond: 200, burst: 4_000 }, org: { perSecond: 5_000, burst: 200_000 } }
  }
}
