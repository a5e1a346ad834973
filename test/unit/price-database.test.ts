import type { Provider } from "@pydantic/genai-prices"
import { describe, expect, it } from "vitest"
import { costAt, lookupPrice, memoizedRates, priceSignal, type Rates, resolveRates } from "../../src/domain/prices.ts"

/**
 * How a price database in genai-prices' format is read: which model a name matches (every kind of
 * match rule), which of a model's prices holds when (from a date, at a time of day), tiers by
 * input size, and the operator's own table before it. The names are made up so that only this
 * database can know them (the bundled one is asked first and knows none of them).
 */
const provider: Provider = {
  id: "zz-test",
  name: "Test provider",
  api_pattern: "^https://zz\\.invalid",
  models: [
    { id: "zzq-exact", match: { equals: "ZZQ-Exact" }, prices: { input_mtok: 1, output_mtok: 2 } },
    { id: "zzq-starts", match: { starts_with: "zzq-start" }, prices: { input_mtok: 3, output_mtok: 4 } },
    { id: "zzq-ends", match: { ends_with: "-zzq-end" }, prices: { input_mtok: 5, output_mtok: 6 } },
    { id: "zzq-contains", match: { contains: "zzq-middle" }, prices: { input_mtok: 7, output_mtok: 8 } },
    { id: "zzq-regex", match: { regex: "^zzq-r[0-9]+$" }, prices: { input_mtok: 9, output_mtok: 10 } },
    { id: "zzq-or", match: { or: [{ equals: "zzq-or-a" }, { equals: "zzq-or-b" }] }, prices: { input_mtok: 11, output_mtok: 12 } },
    { id: "zzq-and", match: { and: [{ starts_with: "zzq-and" }, { ends_with: "-pro" }] }, prices: { input_mtok: 13, output_mtok: 14 } },
    {
      id: "zzq-tiered",
      match: { equals: "zzq-tiered" },
      prices: {
        // Tiers listed out of order: the larger threshold applies above it.
        input_mtok: { base: 1, tiers: [{ start: 200_000, price: 4 }, { start: 100_000, price: 2 }] },
        output_mtok: 10,
        cache_read_mtok: 0.5,
        cache_write_mtok: 1.5,
        requests_kcount: 20
      }
    },
    {
      id: "zzq-dated",
      match: { equals: "zzq-dated" },
      prices: [
        { prices: { input_mtok: 10, output_mtok: 10 } },
        { constraint: { type: "start_date", start_date: "2026-06-01" }, prices: { input_mtok: 5, output_mtok: 5 } }
      ]
    },
    {
      id: "zzq-night",
      match: { equals: "zzq-night" },
      prices: [
        { prices: { input_mtok: 10, output_mtok: 10 } },
        // Off-peak 16:30 to 00:30 UTC, written in UTC+08:00: wraps around midnight.
        { constraint: { type: "time_of_date", start_time: "00:30:00+08:00", end_time: "08:30:00.5+08:00" }, prices: { input_mtok: 1, output_mtok: 1 } }
      ]
    },
    {
      id: "zzq-day",
      match: { equals: "zzq-day" },
      prices: [
        { prices: { input_mtok: 10, output_mtok: 10 } },
        { constraint: { type: "time_of_date", start_time: "09:00:00-02:00", end_time: "12:00:00Z" }, prices: { input_mtok: 2, output_mtok: 2 } }
      ]
    }
  ]
}
const database = [provider]
const at = Date.parse("2026-03-01T12:00:00Z")
const ratesOf = (model: string, when = at) => resolveRates(database, {}, model)?.(when)
const million = { tokensIn: 1_000_000, tokensOut: 1_000_000, cacheRead: 0, cacheWrite: 0 }
const costOf = (model: string, when = at) => {
  const rates = ratesOf(model, when)
  return rates === undefined ? undefined : costAt(rates, million)
}

describe("a price database's match rules", () => {
  it("find a model by equals (any case), starts_with, ends_with, contains, regex, or and and", () => {
    expect(
      ["zzq-exact", "ZZQ-EXACT", "zzq-starts-2", "x-zzq-end", "a-zzq-middle-b", "zzq-r42", "zzq-or-a", "zzq-or-b", "zzq-and-x-pro"].map(costOf)
    ).toEqual([3, 3, 7, 11, 15, 19, 23, 23, 27])
  })

  it("match nothing where the rule does not hold", () => {
    // zzq-exactly: not equal; zzq-r4x: not the regex; zzq-and-x: not ending in -pro; zzq-end-x: not ending in -zzq-end.
    expect(["zzq-exactly", "zzq-r4x", "zzq-and-x", "zzq-or-c", "zzq-end-x", "zzq-middl"].map(costOf)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined
    ])
  })

  it("take a dated or tagged id the database does not list at its model's price, cutting at -, @ or :", () => {
    expect(["zzq-exact-2026-01-01", "zzq-exact@v2", "zzq-exact:latest", "zzq-dated-v1-extra"].map((m) => costOf(m))).toEqual([3, 3, 3, 20])
    expect(costOf("-zzq-exact")).toBeUndefined()
  })
})

describe("a model's prices over time", () => {
  it("follow a start date from that day on", () => {
    expect(costOf("zzq-dated", Date.parse("2026-05-31T23:59:59Z"))).toBe(20)
    expect(costOf("zzq-dated", Date.parse("2026-06-01T00:00:00Z"))).toBe(10)
  })

  it("follow a time of day given with its offset, also across midnight", () => {
    const utc = (hhmm: string) => Date.parse(`2026-03-01T${hhmm}:00Z`)
    // 00:30+08:00 is 16:30 UTC; 08:30:00.5+08:00 is 00:30:00.5 UTC.
    expect(["16:29", "16:30", "23:59", "00:00", "00:30", "00:31", "12:00"].map((t) => costOf("zzq-night", utc(t)))).toEqual([20, 2, 2, 2, 2, 20, 20])
    // 09:00-02:00 is 11:00 UTC, to 12:00 UTC.
    expect(["10:59", "11:00", "11:59", "12:00"].map((t) => costOf("zzq-day", utc(t)))).toEqual([20, 4, 4, 20])
  })
})

describe("tiered, cached and per-request prices", () => {
  it("price input by the tier its size is above, whatever order the tiers are listed in", () => {
    const rates = ratesOf("zzq-tiered")!
    const cost = (tokensIn: number) => costAt(rates, { tokensIn, tokensOut: 0, cacheRead: 0, cacheWrite: 0 })
    // Each call also pays 20 USD per thousand requests: 0.02.
    expect([cost(100_000), cost(100_001), cost(200_000), cost(200_001)].map((c) => Math.round((c - 0.02) * 1e9) / 1e9)).toEqual([
      0.1,
      0.200002,
      0.4,
      0.800004
    ])
  })

  it("price cache reads and writes at their own rates, the rest of the input at the input rate", () => {
    const rates = ratesOf("zzq-tiered")!
    const usd = costAt(rates, { tokensIn: 1_000_000, tokensOut: 1_000, cacheRead: 600_000, cacheWrite: 100_000 })
    // A million tokens in is above the 200,000 tier: 4 USD per million uncached.
    expect(usd).toBeCloseTo(0.3 * 4 + 0.6 * 0.5 + 0.1 * 1.5 + 0.001 * 10 + 0.02, 9)
  })
})

describe("the operator's own price table", () => {
  const own = {
    "zzq-exact": { input: 100, output: 100 },
    "acme-coder": { input: 1, output: 2, cache_read: 0.1 },
    "acme-coder-large": { input: 3, output: 6, cache_write: 4 }
  }

  it("comes before the database, exactly or by the longest name the model extends", () => {
    expect(lookupPrice(own, "acme-coder")).toBe(own["acme-coder"])
    expect(lookupPrice(own, "acme-coder-large-0901")).toBe(own["acme-coder-large"])
    expect(lookupPrice(own, "acme-coder@2026")).toBe(own["acme-coder"])
    expect(lookupPrice(own, "acme-coder:free")).toBe(own["acme-coder"])
    expect(lookupPrice(own, "acme-coderx")).toBeUndefined()
    expect(lookupPrice(own, "x-acme-coder")).toBeUndefined()
    expect(resolveRates(database, own, "zzq-exact")?.(at)).toEqual({ input: 100, output: 100 })
  })

  it("prices only the cache kinds it names", () => {
    expect(resolveRates(database, own, "acme-coder")?.(at)).toEqual({ input: 1, output: 2, cache_read: 0.1 })
    expect(resolveRates(database, own, "acme-coder-large")?.(at)).toEqual({ input: 3, output: 6, cache_write: 4 })
    const rates: Rates = resolveRates(database, own, "acme-coder")!(at)
    // No cache-write rate: written tokens are priced as input.
    expect(costAt(rates, { tokensIn: 1_000_000, tokensOut: 0, cacheRead: 0, cacheWrite: 500_000 })).toBe(1)
  })
})

describe("the cost of a signal", () => {
  const lookup = memoizedRates(database, {}, 2)

  it("is the adapter's own figure where it sends one, to the nano-dollar, else estimated from its tokens", () => {
    const base = { model: "zzq-exact", tokensIn: 1_000, tokensOut: 1_000, at }
    expect(priceSignal(lookup, { ...base, reportedUsd: 0.1234567891234 })).toEqual({ usd: 0.123456789, estimated: false, model_known: true })
    expect(priceSignal(lookup, base)).toEqual({ usd: 0.003, estimated: true, model_known: true })
    expect(priceSignal(lookup, { ...base, tokensIn: 0, tokensOut: 0 })).toEqual({ usd: 0, estimated: true, model_known: true })
    expect(priceSignal(lookup, { ...base, model: "zzq-unknown" })).toEqual({ usd: 0, estimated: false, model_known: false })
    expect(priceSignal(lookup, { ...base, model: undefined })).toEqual({ usd: 0, estimated: false, model_known: false })
  })

  it("remembers a bounded number of names and answers the same after forgetting", () => {
    const names = ["zzq-exact", "zzq-r1", "zzq-unknown", "zzq-starts", "zzq-exact", "zzq-unknown"]
    expect(names.map((m) => priceSignal(lookup, { model: m, tokensIn: 1_000_000, tokensOut: 0, at }).usd)).toEqual([1, 9, 0, 3, 1, 0])
  })
})
