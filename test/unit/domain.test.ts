import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { apiKeyEnvironment, apiKeyPattern, generateApiKey, generateLicenseKey, hashKey, keyHint, licenseKeyPattern } from "../../src/domain/credentials.ts"
import { makeId } from "../../src/domain/ids.ts"
import { decodeCursor, encodeCursor, toPage } from "../../src/domain/pagination.ts"
import { allowsLiveKeys, managementRateWindows, Plan, planHasFeature } from "../../src/domain/plans.ts"
import { calcPrice } from "@pydantic/genai-prices"
import { bundledDatabase, memoizedRates, type PriceInput, priceSignal, type PriceTable, resolveRates } from "../../src/domain/prices.ts"
import { hasScope, parseScopes } from "../../src/domain/scopes.ts"
import { makeRouteTable } from "../../src/http/route-table.ts"

const noOverrides = { perMinute: null, perHour: null, perDay: null }

describe("prices", async () => {
  const database = await bundledDatabase()
  const claude = "claude-sonnet-4-20250514"
  const at = Date.parse("2026-11-25T12:00:00.000Z")
  const price = (overrides: PriceTable, input: Omit<PriceInput, "at">) => priceSignal(memoizedRates(database, overrides), { at, ...input })

  it("a Claude call with cache reads and writes costs what genai-prices computes from its own prices", () => {
    const usage = { input_tokens: 50_000, cache_read_tokens: 40_000, cache_write_tokens: 6_000, output_tokens: 2_000 }
    const library = calcPrice(usage, claude, { timestamp: new Date(at) })!
    const p = library.model_price as Record<string, number>
    // Reads are cheaper than input and writes dearer: the cache is what the hand-kept table missed.
    expect(p.cache_read_mtok).toBeLessThan(p.input_mtok!)
    expect(p.cache_write_mtok).toBeGreaterThan(p.input_mtok!)
    const expected = (4_000 * p.input_mtok! + 40_000 * p.cache_read_mtok! + 6_000 * p.cache_write_mtok! + 2_000 * p.output_mtok!) / 1e6
    const priced = price({}, { model: claude, tokensIn: 50_000, tokensOut: 2_000, cacheRead: 40_000, cacheWrite: 6_000 })
    expect(priced).toEqual({ usd: Math.round(expected * 1e9) / 1e9, estimated: true, model_known: true })
    expect(priced.usd).toBeCloseTo(library.total_price, 9)
  })

  it("prices as the library does, for every model of the major providers, any usage and any time", async () => {
    const names = database
      .filter((p) => ["anthropic", "openai", "google", "mistral", "deepseek", "x-ai"].includes(p.id))
      .flatMap((p) => p.models.map((m) => m.id))
    expect(names.length).toBeGreaterThan(100)
    const lookup = memoizedRates(database, {})
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.integer({ min: 1, max: 2_000_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: Date.parse("2024-01-01"), max: Date.parse("2027-01-01") }),
        (model, tokensIn, tokensOut, readShare, writeShare, when) => {
          const cacheRead = Math.floor(tokensIn * readShare)
          const cacheWrite = Math.floor((tokensIn - cacheRead) * writeShare)
          const library = calcPrice({ input_tokens: tokensIn, output_tokens: tokensOut, cache_read_tokens: cacheRead, cache_write_tokens: cacheWrite }, model, {
            timestamp: new Date(when)
          })
          const ours = priceSignal(lookup, { model, tokensIn, tokensOut, cacheRead, cacheWrite, at: when })
          if (library === null) return
          expect(ours.model_known).toBe(true)
          expect(ours.usd).toBeCloseTo(library.total_price, 8)
        }
      ),
      { numRuns: 2_000 }
    )
  })

  it("a price that depends on the time of day follows the call's time", () => {
    const reasoner = "deepseek-reasoner"
    for (const hour of [0, 3, 12, 17, 23]) {
      const when = Date.UTC(2026, 10, 25, hour, 15)
      const library = calcPrice({ input_tokens: 1_000_000, output_tokens: 1_000_000 }, reasoner, { timestamp: new Date(when) })!
      const ours = priceSignal(memoizedRates(database, {}), { model: reasoner, tokensIn: 1_000_000, tokensOut: 1_000_000, at: when })
      expect(ours.usd, `${hour}:15`).toBeCloseTo(library.total_price, 9)
    }
  })

  it("MODEL_PRICES overrides win, exactly or for the dated ids of a name; cache prices are optional", () => {
    const overrides: PriceTable = { "claude-sonnet-4": { input: 1, output: 2, cache_read: 0.5 }, "in-house": { input: 10, output: 20 } }
    // 1,000 uncached at 1, 1,000 reads at 0.5, 1,000 writes with no cache price: at the input price.
    expect(price(overrides, { model: claude, tokensIn: 3_000, tokensOut: 1_000, cacheRead: 1_000, cacheWrite: 1_000 }).usd)
      .toBeCloseTo((2_000 * 1 + 1_000 * 0.5 + 1_000 * 2) / 1e6, 12)
    expect(price(overrides, { model: "in-house:v2", tokensIn: 1_000_000, tokensOut: 0 })).toEqual({ usd: 10, estimated: true, model_known: true })
  })

  it("a reported cost_usd wins; an unknown model costs 0 and is unknown; a pre-known name's dated id still matches", () => {
    expect(price({}, { model: claude, tokensIn: 1_000, tokensOut: 1_000, cacheRead: 500, reportedUsd: 0.25 }))
      .toEqual({ usd: 0.25, estimated: false, model_known: true })
    expect(price({}, { model: "acme-model-9", tokensIn: 1_000, tokensOut: 1_000 })).toEqual({ usd: 0, estimated: false, model_known: false })
    // Names the hand-kept table knew, dated or tagged: the database or its prefix matching knows them.
    for (
      const model of ["gpt-4.1-mini-2025-04-14", "claude-3-5-sonnet@20240620", "codex-mini-latest", "gemini-2.5-pro-preview-06-05", "o3-2025-04-16",
        "mistral-large-2411"]
    ) {
      expect(price({}, { model, tokensIn: 1_000, tokensOut: 1_000 }).model_known, model).toBe(true)
    }
    expect(price({}, { model: "gpt-4.1x", tokensIn: 1_000, tokensOut: 0 }).model_known).toBe(false)
  })

  it("the remembering lookup answers what a fresh resolution does, however many names it has seen", () => {
    const model = fc.oneof(
      fc.constantFrom("claude-sonnet-4", "gpt-5", "o3", "gemini-2.5-flash", "in-house"),
      fc.tuple(fc.constantFrom("claude-sonnet-4", "gpt-5", "in-house"), fc.constantFrom("-", "@", ":", "", "x"), fc.string({ maxLength: 10 }))
        .map(([n, sep, rest]) => n + sep + rest),
      fc.string({ maxLength: 20 })
    )
    const overrides: PriceTable = { "in-house": { input: 1, output: 1 } }
    fc.assert(
      fc.property(fc.array(model, { maxLength: 30 }), fc.integer({ min: 1, max: 8 }), (models, limit) => {
        const lookup = memoizedRates(database, overrides, limit)
        for (const m of [...models, ...models]) {
          expect(lookup(m)?.(at)).toEqual(resolveRates(database, overrides, m)?.(at))
        }
      }),
      { numRuns: 50 }
    )
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
    expect(decodeCursor(Buffer.from("{\"x\":1}").toString("base64url"))).toBeUndefined()
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
    [{
      groups: {
        g: {
          endpoints: {
            list: { method: "GET", path: "/api/v1/rules" },
            create: { method: "POST", path: "/api/v1/rules" },
            update: { method: "PUT", path: "/api/v1/rules/:id" },
            remove: { method: "DELETE", path: "/api/v1/rules/:id" },
            one: { method: "GET", path: "/api/v1/users/:id" },
            me: { method: "GET", path: "/api/v1/users/me" }
          }
        }
      }
    }],
    [{ method: "GET", path: "/healthz" }]
  )
  it("knows the methods of each path, parameters included", () => {
    expect(table.methodsFor("/api/v1/rules")).toEqual(["GET", "POST"])
    expect(table.methodsFor("/api/v1/rules/rule_1")).toEqual(["DELETE", "PUT"])
    expect(table.methodsFor("/api/v1/rules/rule_1/x")).toEqual([])
    expect(table.methodsFor("/healthz")).toEqual(["GET"])
  })
  it("names a request's route by its template (metrics labels), literal paths before parameters", () => {
    expect(table.templateOf("DELETE", "/api/v1/rules/rule_1")).toBe("/api/v1/rules/:id")
    expect(table.templateOf("GET", "/api/v1/users/me")).toBe("/api/v1/users/me")
    expect(table.templateOf("GET", "/api/v1/users/user_1")).toBe("/api/v1/users/:id")
    expect(table.templateOf("HEAD", "/healthz")).toBe("/healthz")
    // A wrong method still names the path's route (answered 405); an unknown path none.
    expect(table.templateOf("POST", "/api/v1/rules/rule_1")).toBe("/api/v1/rules/:id")
    expect(table.templateOf("GET", "/api/v1/rules/rule_1/x")).toBe("unmatched")
  })
})
