import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { apiKeyEnvironment, apiKeyPattern, generateApiKey, generateLicenseKey, hashKey, keyHint, licenseKeyPattern } from "../../src/domain/credentials.ts"
import { makeId } from "../../src/domain/ids.ts"
import { decodeCursor, encodeCursor, toPage } from "../../src/domain/pagination.ts"
import { allowsLiveKeys, managementRateWindows, Plan, planHasFeature } from "../../src/domain/plans.ts"
import { defaultPrices, lookupPrice, memoizedLookup } from "../../src/domain/prices.ts"
import { hasScope, parseScopes } from "../../src/domain/scopes.ts"
import { makeRouteTable } from "../../src/http/route-table.ts"

const noOverrides = { perMinute: null, perHour: null, perDay: null }

describe("prices", () => {
  const names = Object.keys(defaultPrices)
  // Shipped names, dated or tagged variants of them, and arbitrary strings.
  const model = fc.oneof(
    fc.constantFrom(...names),
    fc.tuple(fc.constantFrom(...names), fc.constantFrom("-", "@", ":", "", "x"), fc.string({ maxLength: 10 })).map(([n, sep, rest]) => n + sep + rest),
    fc.string({ maxLength: 20 })
  )

  it("a dated model name takes the price of the longest shipped name it extends", () => {
    expect(lookupPrice(defaultPrices, "gpt-4.1-mini-2025-04-14")).toEqual(defaultPrices["gpt-4.1-mini"])
    expect(lookupPrice(defaultPrices, "gpt-4.1-2025-04-14")).toEqual(defaultPrices["gpt-4.1"])
    expect(lookupPrice(defaultPrices, "gpt-4.1x")).toBeUndefined()
  })

  it("the remembering lookup answers what the table does, however many names it has seen", () => {
    fc.assert(fc.property(fc.array(model, { maxLength: 40 }), fc.integer({ min: 1, max: 8 }), (models, limit) => {
      const lookup = memoizedLookup(defaultPrices, limit)
      for (const m of [...models, ...models]) expect(lookup(m)).toBe(lookupPrice(defaultPrices, m))
    }))
  })
})

describe("plans", () => {
  it("rate limits follow the spec's table", () => {
    expect(managementRateWindows("team", noOverrides)).toEqual([
      { name: "minute", windowSeconds: 60, limit: 600 },
      { name: "day", windowSeconds: 86_400, limit: 100_000 }
    ])
    expect(managementRateWindows("business", noOverrides)).toEqual([{ name: "hour", windowSeconds: 3_600, limit: 10_000 }])
    for (const plan of ["lite", "developer", "professional"] as const) {
      expect(managementRateWindows(plan, noOverrides).map((w) => w.limit)).toEqual([60, 1_000])
    }
  })
  it("an org's overrides replace the plan's windows", () => {
    expect(managementRateWindows("enterprise", { perMinute: 5_000, perHour: null, perDay: 1_000_000 })).toEqual([
      { name: "minute", windowSeconds: 60, limit: 5_000 },
      { name: "day", windowSeconds: 86_400, limit: 1_000_000 }
    ])
  })
  it("live keys start at team; features only grow with the plan", () => {
    expect(Plan.literals.filter(allowsLiveKeys)).toEqual(["team", "business", "enterprise"])
    const features = ["signals", "sessions", "goals", "goal_drift", "anomalies"] as const
    for (const feature of features) {
      const has = Plan.literals.map((p) => planHasFeature(p, feature))
      expect(has).toEqual([...has].sort((a, b) => Number(a) - Number(b)))
    }
    expect(planHasFeature("lite", "goals")).toBe(false)
    expect(planHasFeature("developer", "goals")).toBe(true)
  })
})

describe("scopes", () => {
  it("write implies read, not the other way round, and resources are separate", () => {
    expect(hasScope(["rules:write"], "rules", "read")).toBe(true)
    expect(hasScope(["rules:read"], "rules", "write")).toBe(false)
    expect(hasScope(["rules:write"], "events", "read")).toBe(false)
  })
  it("parses scope lists from the command line", () => {
    expect(parseScopes("rules:read, events:read")).toEqual(["rules:read", "events:read"])
    expect(parseScopes("all")).toHaveLength(10)
    expect(parseScopes("rules:fly")).toMatch(/unknown scope/)
    expect(parseScopes(" , ")).toMatch(/at least one/)
  })
})

describe("credentials", () => {
  it("generated keys match the spec's formats and say their environment", () => {
    const live = generateApiKey("sek", "live")
    const test = generateApiKey("sek", "test")
    expect(live).toMatch(apiKeyPattern("sek"))
    expect(test).toMatch(apiKeyPattern("sek"))
    expect([apiKeyEnvironment(live), apiKeyEnvironment(test)]).toEqual(["live", "test"])
    expect(generateLicenseKey()).toMatch(licenseKeyPattern)
    expect(generateApiKey("sek", "live")).not.toBe(live)
  })
  it("stores hashes and shows hints that cannot be used", () => {
    const key = generateApiKey("sek", "live")
    expect(hashKey(key)).toMatch(/^[0-9a-f]{64}$/)
    expect(hashKey(key)).not.toContain(key.slice(9))
    expect(keyHint(key)).toBe(`sek_live_…${key.slice(-4)}`)
  })
})

describe("ids", () => {
  it("carry their prefix and sort in creation order, even within one millisecond", () => {
    const ids = Array.from({ length: 1_000 }, () => makeId("proj", 1_700_000_000_000))
    expect(ids.every((id) => /^proj_[0-9a-f]{32}$/.test(id))).toBe(true)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(ids.length)
    const later = makeId("proj", 1_700_000_000_001)
    expect(later > ids[ids.length - 1]!).toBe(true)
  })
})

describe("pagination", () => {
  it("cursors round-trip any key and reject foreign tokens", () => {
    fc.assert(fc.property(fc.string(), (key) => decodeCursor(encodeCursor(key)) === key))
    expect(decodeCursor("not-a-cursor")).toBeUndefined()
    expect(decodeCursor(Buffer.from('{"x":1}').toString("base64url"))).toBeUndefined()
  })
  it("pages from limit+1 rows: has_more, cursor of the last item, empty cursor at the end", () => {
    const rows = ["e", "d", "c", "b"]
    const page = toPage(rows, 3, (r) => r)
    expect(page).toMatchObject({ data: ["e", "d", "c"], has_more: true })
    expect(decodeCursor(page.cursor)).toBe("c")
    expect(toPage(["b"], 3, (r) => r)).toEqual({ data: ["b"], cursor: "", has_more: false })
  })
})

describe("route table", () => {
  const table = makeRouteTable(
    [{ groups: { g: { endpoints: {
      list: { method: "GET", path: "/api/v1/rules" },
      create: { method: "POST", path: "/api/v1/rules" },
      update: { method: "PUT", path: "/api/v1/rules/:id" },
      remove: { method: "DELETE", path: "/api/v1/rules/:id" }
    } } } }],
    [{ method: "GET", path: "/healthz" }]
  )
  it("knows the methods of each path, parameters included", () => {
    expect(table.methodsFor("/api/v1/rules")).toEqual(["GET", "POST"])
    expect(table.methodsFor("/api/v1/rules/rule_1")).toEqual(["DELETE", "PUT"])
    expect(table.methodsFor("/api/v1/rules/rule_1/x")).toEqual([])
    expect(table.methodsFor("/healthz")).toEqual(["GET"])
  })
})
