import { describe, expect, it } from "vitest"
import {
  allowsLiveKeys,
  anonymousRateWindows,
  EngineFeature,
  engineSignalBuckets,
  managementRateWindows,
  minimumPlanFor,
  Plan,
  planHasFeature
} from "../../src/domain/plans.ts"

/** What each plan gives an org, as the README's plan table and rate limits promise it. */
const none = { perMinute: null, perHour: null, perDay: null }

describe("the plans", () => {
  it("open each engine feature from its plan up, and live keys from team up", () => {
    const table = Plan.literals.map((plan) => [plan, EngineFeature.literals.filter((f) => planHasFeature(plan, f)), allowsLiveKeys(plan)])
    expect(table).toEqual([
      ["lite", ["signals", "sessions"], false],
      ["developer", ["signals", "sessions", "goals"], false],
      ["professional", ["signals", "sessions", "goals", "goal_drift"], false],
      ["team", ["signals", "sessions", "goals", "goal_drift", "anomalies"], true],
      ["business", ["signals", "sessions", "goals", "goal_drift", "anomalies"], true],
      ["enterprise", ["signals", "sessions", "goals", "goal_drift", "anomalies"], true]
    ])
    expect(EngineFeature.literals.map((f) => [f, minimumPlanFor(f)])).toEqual([
      ["signals", "lite"],
      ["sessions", "lite"],
      ["goals", "developer"],
      ["goal_drift", "professional"],
      ["anomalies", "team"]
    ])
  })

  it("limit the management API per plan: a minute and a day below team, more on team, an hour from business", () => {
    const windows = (plan: Plan) => managementRateWindows(plan, none).map((w) => `${w.limit}/${w.name} (${w.windowSeconds} s)`)
    expect(Plan.literals.map((plan) => [plan, windows(plan)])).toEqual([
      ["lite", ["60/minute (60 s)", "1000/day (86400 s)"]],
      ["developer", ["60/minute (60 s)", "1000/day (86400 s)"]],
      ["professional", ["60/minute (60 s)", "1000/day (86400 s)"]],
      ["team", ["600/minute (60 s)", "100000/day (86400 s)"]],
      ["business", ["10000/hour (3600 s)"]],
      ["enterprise", ["10000/hour (3600 s)"]]
    ])
  })

  it("let an org's own limits replace its plan's, window by window as set", () => {
    expect(managementRateWindows("lite", { perMinute: 5, perHour: null, perDay: null })).toEqual([
      { name: "minute", windowSeconds: 60, limit: 5 }
    ])
    expect(managementRateWindows("team", { perMinute: null, perHour: 70, perDay: null })).toEqual([
      { name: "hour", windowSeconds: 3_600, limit: 70 }
    ])
    expect(managementRateWindows("business", { perMinute: null, perHour: null, perDay: 9 })).toEqual([
      { name: "day", windowSeconds: 86_400, limit: 9 }
    ])
    expect(managementRateWindows("enterprise", { perMinute: 1, perHour: 2, perDay: 3 }).map((w) => [w.name, w.limit])).toEqual([
      ["minute", 1],
      ["hour", 2],
      ["day", 3]
    ])
  })

  it("limit requests without a valid credential per address, 60 a minute unless set", () => {
    expect(anonymousRateWindows()).toEqual([{ name: "minute", windowSeconds: 60, limit: 60 }])
    expect(anonymousRateWindows(600)).toEqual([{ name: "minute", windowSeconds: 60, limit: 600 }])
  })

  it("give each key and each org a bucket of signals by plan", () => {
    expect(Plan.literals.map((plan) => [plan, engineSignalBuckets(plan)])).toEqual([
      ["lite", { key: { perSecond: 20, burst: 1_000 }, org: { perSecond: 200, burst: 10_000 } }],
      ["developer", { key: { perSecond: 20, burst: 1_000 }, org: { perSecond: 200, burst: 10_000 } }],
      ["professional", { key: { perSecond: 20, burst: 1_000 }, org: { perSecond: 200, burst: 10_000 } }],
      ["team", { key: { perSecond: 50, burst: 1_000 }, org: { perSecond: 1_000, burst: 50_000 } }],
      ["business", { key: { perSecond: 200, burst: 4_000 }, org: { perSecond: 5_000, burst: 200_000 } }],
      ["enterprise", { key: { perSecond: 200, burst: 4_000 }, org: { perSecond: 5_000, burst: 200_000 } }]
    ])
  })
})
