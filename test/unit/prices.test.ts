import { describe, expect, it } from "@effect/vitest"
import { calcPrice, type ModelInfo, type ModelPrice as DatabasePrice, type Provider } from "@pydantic/genai-prices"
import { bundledDatabase, memoizedRates, priceSignal, type PriceTable, resolveRates } from "../../src/domain/prices.ts"

// A provider the bundled database does not know, shaped as genai-prices' own data is: the
// service falls back to such a list's patterns when genai-prices' provider matching finds nothing.
const acme = (models: ReadonlyArray<ModelInfo>): Provider => ({ id: "acme", name: "Acme", api_pattern: "https://api\\.acme\\.test", models: [...models] })
const flat = (input: number): DatabasePrice => ({ input_mtok: input, output_mtok: input })

const patterns = acme([
  { id: "alpha", match: { or: [{ equals: "Acme-Alpha" }, { equals: "acme-alpha-lts" }] }, prices: flat(1) },
  { id: "beta-fast", match: { and: [{ starts_with: "acme-beta" }, { ends_with: "-fast" }] }, prices: flat(2) },
  { id: "gamma", match: { starts_with: "ACME-Gamma" }, prices: flat(3) },
  { id: "delta", match: { ends_with: "-acmedelta" }, prices: flat(4) },
  { id: "epsilon", match: { contains: "epsilon-acme" }, prices: flat(5) },
  { id: "zeta", match: { regex: "^acme-zeta-\\d+$" }, prices: flat(6) }
])

// Input price per million tokens of a name at noon, or undefined when nobody prices it.
const inputPrice = (database: ReadonlyArray<Provider>, model: string, overrides: PriceTable = {}) =>
  resolveRates(database, overrides, model)?.(Date.UTC(2026, 10, 25, 12))?.input

describe("model prices", async () => {
  const bundled = await bundledDatabase()

  it.each([
    ["acme-alpha", 1],
    ["ACME-ALPHA", 1],
    ["acme-alpha-lts", 1],
    ["acme-alpha-2026-01-01", 1],
    ["acme-beta-1-fast", 2],
    ["acme-beta-1", undefined],
    ["turbo-fast", undefined],
    ["acme-gamma-2", 3],
    ["  Acme-Gamma-2  ", 3],
    ["gamma-acme", undefined],
    ["my-acmedelta", 4],
    ["acmedelta-my", undefined],
    ["big-epsilon-acme-v2", 5],
    ["acme-zeta-12", 6],
    ["acme-zeta-x", undefined],
    ["nobody-knows-this", undefined],
    ["", undefined]
  ])("a name only another provider list prices is matched by its pattern: %j → %j", (model, price) => {
    expect(inputPrice([patterns], model)).toBe(price)
  })

  it("a model matched by no pattern of the list is unknown and costs nothing", () => {
    const lookup = memoizedRates([patterns], {})
    expect(priceSignal(lookup, { model: "acme-omega", tokensIn: 1_000, tokensOut: 1_000, at: 0 })).toEqual({ usd: 0, estimated: false, model_known: false })
    expect(priceSignal(lookup, { model: "acme-alpha", tokensIn: 1_000_000, tokensOut: 0, at: 0 })).toEqual({ usd: 1, estimated: true, model_known: true })
  })

  it("a long-context call is priced at the tier its input passed, at the base up to the tier's start", () => {
    const tiered = acme([{
      id: "long",
      match: { equals: "acme-long" },
      // Tiers listed out of order: the tier the input passed is chosen whatever the order.
      prices: { input_mtok: { base: 1, tiers: [{ start: 400_000, price: 3 }, { start: 200_000, price: 2 }] }, output_mtok: 10 }
    }])
    const lookup = memoizedRates([tiered], {})
    const cost = (tokensIn: number) => priceSignal(lookup, { model: "acme-long", tokensIn, tokensOut: 0, at: 0 }).usd
    expect(cost(200_000)).toBeCloseTo(0.2, 9)
    expect(cost(200_001)).toBeCloseTo(0.400002, 9)
    expect(cost(400_000)).toBeCloseTo(0.8, 9)
    expect(cost(400_001)).toBeCloseTo(1.200003, 9)
  })

  it.each([200_000, 200_001, 1_000_000])("Gemini 2.5 Pro at %i input tokens costs what genai-prices computes", (tokensIn) => {
    const at = Date.UTC(2026, 10, 25, 12)
    const library = calcPrice({ input_tokens: tokensIn, output_tokens: 10_000 }, "gemini-2.5-pro", { timestamp: new Date(at) })!
    const ours = priceSignal(memoizedRates(bundled, {}), { model: "gemini-2.5-pro", tokensIn, tokensOut: 10_000, at })
    expect(ours.usd).toBeCloseTo(library.total_price, 9)
  })

  describe("prices that change by date and by time of day", () => {
    const scheduled = acme([
      {
        id: "dated",
        match: { equals: "acme-dated" },
        prices: [{ prices: flat(1) }, { constraint: { type: "start_date", start_date: "2026-06-01" }, prices: flat(2) }]
      },
      {
        id: "night",
        match: { equals: "acme-night" },
        prices: [
          { prices: flat(1) },
          { constraint: { type: "start_date", start_date: "2026-06-01" }, prices: flat(2) },
          // 23:00 at UTC+1 to 02:30:00.5 at UTC-1: 22:00Z to 03:30:00.5Z, across midnight.
          { constraint: { type: "time_of_date", start_time: "23:00:00+01:00", end_time: "02:30:00.500-01:00" }, prices: flat(3) }
        ]
      },
      {
        id: "day",
        match: { equals: "acme-day" },
        prices: [
          { prices: flat(1) },
          // 09:00:30 at UTC+5:30 to 17:00Z: 03:30:30Z to 17:00Z, within one day.
          { constraint: { type: "time_of_date", start_time: "09:00:30+05:30", end_time: "17:00:00Z" }, prices: flat(4) }
        ]
      },
      {
        id: "never",
        match: { equals: "acme-never" },
        // A window that ends where it starts is empty, not the whole day.
        prices: [{ prices: flat(1) }, { constraint: { type: "time_of_date", start_time: "12:00:00Z", end_time: "12:00:00Z" }, prices: flat(5) }]
      }
    ])
    const priceAt = (model: string, iso: string) => resolveRates([scheduled], {}, model)!(Date.parse(iso)).input

    it.each([
      ["2026-05-31T23:59:59.999Z", 1],
      ["2026-06-01T00:00:00.000Z", 2],
      ["2027-01-01T00:00:00.000Z", 2]
    ])("a price from a date on at %s is %i", (iso, price) => {
      expect(priceAt("acme-dated", iso)).toBe(price)
    })

    it.each([
      ["2026-05-31T12:00:00.000Z", 1],
      ["2026-05-31T23:59:59.999Z", 3],
      ["2026-06-01T21:59:59.999Z", 2],
      ["2026-06-01T22:00:00.000Z", 3],
      ["2026-06-02T00:00:00.000Z", 3],
      ["2026-06-02T03:30:00.000Z", 3],
      ["2026-06-02T03:30:00.500Z", 2],
      ["2026-06-02T12:00:00.000Z", 2]
    ])("a night rate across midnight at %s is %i", (iso, price) => {
      expect(priceAt("acme-night", iso)).toBe(price)
    })

    it.each([
      ["2026-11-25T03:30:29.999Z", 1],
      ["2026-11-25T03:30:30.000Z", 4],
      ["2026-11-25T16:59:59.999Z", 4],
      ["2026-11-25T17:00:00.000Z", 1],
      ["2026-11-25T23:00:00.000Z", 1]
    ])("a day rate at %s is %i", (iso, price) => {
      expect(priceAt("acme-day", iso)).toBe(price)
    })

    it.each(["2026-11-25T00:00:00.000Z", "2026-11-25T11:59:59.999Z", "2026-11-25T12:00:00.000Z", "2026-11-25T18:00:00.000Z"])(
      "a window that ends where it starts never holds (%s)",
      (iso) => {
        expect(priceAt("acme-never", iso)).toBe(1)
      }
    )
  })

  it("a search model's per-request fee is added to each call that used tokens; a call with none costs nothing", () => {
    const at = Date.UTC(2026, 10, 25, 12)
    const lookup = memoizedRates(bundled, {})
    const library = calcPrice({ input_tokens: 1_000, output_tokens: 500, requests: 1 }, "sonar", { providerId: "perplexity", timestamp: new Date(at) })!
    const ours = priceSignal(lookup, { model: "sonar", tokensIn: 1_000, tokensOut: 500, at })
    expect(ours).toEqual({ usd: Math.round(library.total_price * 1e9) / 1e9, estimated: true, model_known: true })
    expect(ours.usd).toBeGreaterThan(0.01)
    expect(priceSignal(lookup, { model: "sonar", tokensIn: 0, tokensOut: 0, at })).toEqual({ usd: 0, estimated: true, model_known: true })
  })

  it.each<[string, PriceTable, number | undefined]>([
    ["claude-sonnet-4-20250514", { "claude": { input: 1, output: 1 }, "claude-sonnet-4": { input: 2, output: 2 } }, 2],
    ["claude-sonnet-4-20250514", { "claude-sonnet-4": { input: 2, output: 2 }, "claude": { input: 1, output: 1 } }, 2],
    ["claude-haiku-4-5", { "claude-sonnet-4": { input: 2, output: 2 }, "claude": { input: 1, output: 1 } }, 1],
    ["in-house@v2", { "in-house": { input: 7, output: 7 } }, 7],
    ["in-house:v2", { "in-house": { input: 7, output: 7 } }, 7],
    ["in-housev2", { "in-house": { input: 7, output: 7 } }, undefined]
  ])("MODEL_PRICES: %s takes the longest entry it extends (%j)", (model, overrides, price) => {
    expect(inputPrice([], model, overrides)).toBe(price)
  })

  it("an operator's cache write price prices the written tokens, reads without a price cost as input", () => {
    const overrides: PriceTable = { "in-house": { input: 1, output: 2, cache_write: 4 } }
    const priced = priceSignal(memoizedRates([], overrides), {
      model: "in-house",
      tokensIn: 3_000_000,
      tokensOut: 1_000_000,
      cacheRead: 1_000_000,
      cacheWrite: 1_000_000,
      at: 0
    })
    // 2M uncached (reads included) at 1, 1M written at 4, 1M out at 2.
    expect(priced).toEqual({ usd: 8, estimated: true, model_known: true })
  })
})
