import { calcPrice, type ModelInfo, type Provider, waitForUpdate } from "@pydantic/genai-prices"

/**
 * Model prices, used to estimate `cost_usd` when an adapter reports tokens and a model but no
 * cost. The source is the price database of `@pydantic/genai-prices` as bundled in the pinned
 * package (never fetched at run time: its update hook is not installed), with the operator's
 * MODEL_PRICES on top (JSON `{"model": {"input": 3, "output": 15, "cache_read": 0.3,
 * "cache_write": 3.75}}`, USD per million tokens, the cache prices optional).
 *
 * Token convention: `tokensIn` is every input token of the model call, cache reads and cache
 * writes included; `cacheRead` and `cacheWrite` are the parts of it read from and written to the
 * cache. cost = uncached input × input + cache reads × cache read + cache writes × cache write +
 * output × output; a model with no cache price of a kind prices those tokens as input.
 */

/** A price per million tokens: flat, or by the call's input tokens (long-context tiers). */
export type Rate = number | { readonly base: number; readonly tiers: ReadonlyArray<{ readonly start: number; readonly price: number }> }

export interface Rates {
  readonly input?: Rate | undefined
  readonly output?: Rate | undefined
  readonly cache_read?: Rate | undefined
  readonly cache_write?: Rate | undefined
  /** USD per thousand requests (a few search models charge per call). */
  readonly requests_k?: Rate | undefined
}

/** An operator's price (MODEL_PRICES), USD per million tokens. */
export interface ModelPrice {
  readonly input: number
  readonly output: number
  readonly cache_read?: number | undefined
  readonly cache_write?: number | undefined
}

export type PriceTable = Readonly<Record<string, ModelPrice>>

/** A model's rates in force at an instant (epoch ms): most are fixed, a few change by date or time of day. */
export type ModelRates = (at: number) => Rates

export interface TokenCounts {
  readonly tokensIn: number
  readonly tokensOut: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

const rateAt = (rate: Rate | undefined, inputTokens: number): number | undefined => {
  if (rate === undefined || typeof rate === "number") return rate
  let price = rate.base
  for (const tier of rate.tiers) if (inputTokens > tier.start) price = tier.price
  return price
}

/** The cost in USD of one model call at these rates (as genai-prices' `calcPrice` computes it). */
export const costAt = (rates: Rates, t: TokenCounts): number => {
  const all = t.tokensIn
  const input = rateAt(rates.input, all) ?? 0
  const cacheReadRate = rateAt(rates.cache_read, all)
  const cacheWriteRate = rateAt(rates.cache_write, all)
  const read = cacheReadRate === undefined ? 0 : t.cacheRead
  const written = cacheWriteRate === undefined ? 0 : t.cacheWrite
  // Cache parts larger than the input they are parts of are an adapter's mistake: priced as sent,
  // with no uncached input left.
  const uncached = Math.max(0, all - read - written)
  const requests = rateAt(rates.requests_k, all)
  return (uncached * input + read * (cacheReadRate ?? 0) + written * (cacheWriteRate ?? 0) +
        t.tokensOut * (rateAt(rates.output, all) ?? 0)) / 1_000_000 + (requests === undefined ? 0 : requests / 1000)
}

const fromOverride = (p: ModelPrice): Rates => ({
  input: p.input,
  output: p.output,
  ...(p.cache_read !== undefined ? { cache_read: p.cache_read } : {}),
  ...(p.cache_write !== undefined ? { cache_write: p.cache_write } : {})
})

/** An operator's table: a name exactly, else the longest entry it extends with `-`, `@` or `:` (dated ids). */
export const lookupPrice = (table: PriceTable, model: string): ModelPrice | undefined => {
  const exact = table[model]
  if (exact) return exact
  let best: string | undefined
  for (const name of Object.keys(table)) {
    if (model.startsWith(`${name}-`) || model.startsWith(`${name}@`) || model.startsWith(`${name}:`)) {
      if (best === undefined || name.length > best.length) best = name
    }
  }
  return best === undefined ? undefined : table[best]
}

// genai-prices' price keys, as the four token kinds (and requests) this service reports.
type PriceRecord = Readonly<Record<string, unknown>>
const asRate = (value: unknown): Rate | undefined => {
  if (typeof value === "number") return value
  if (typeof value === "object" && value !== null && "base" in value && "tiers" in value) {
    const v = value as { readonly base: number; readonly tiers: ReadonlyArray<{ readonly start: number; readonly price: number }> }
    return { base: v.base, tiers: [...v.tiers].sort((a, b) => a.start - b.start) }
  }
  return undefined
}
const fromDatabase = (p: PriceRecord): Rates => ({
  input: asRate(p.input_mtok),
  output: asRate(p.output_mtok),
  cache_read: asRate(p.cache_read_mtok),
  cache_write: asRate(p.cache_write_mtok),
  requests_k: asRate(p.requests_kcount)
})

/** `HH:MM:SS[.f](Z|±HH:MM)` as seconds after midnight UTC. */
const secondsOfDay = (time: string): number => {
  const m = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|([+-])(\d{2}):(\d{2}))$/.exec(time)
  if (!m) return 0
  const local = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(`0.${m[4] ?? ""}`)
  const offset = m[5] === "Z" ? 0 : (m[6] === "+" ? 1 : -1) * (Number(m[7]) * 60 + Number(m[8])) * 60
  return (local - offset + 86_400) % 86_400
}

/** The rates of a database model at an instant, chosen as genai-prices chooses them (the last constraint that holds). */
const databaseRates = (model: ModelInfo): ModelRates => {
  if (!Array.isArray(model.prices)) {
    const rates = fromDatabase(model.prices)
    return () => rates
  }
  const variants = model.prices.map((c) => {
    const rates = fromDatabase(c.prices)
    const k = c.constraint
    // Stryker disable next-line ArrowFunction,BooleanLiteral: only the first variant has no constraint, and it is the fallback anyway
    if (k === undefined) return { holds: () => true, rates }
    if (k.type === "start_date") {
      const from = Date.parse(`${k.start_date}T00:00:00Z`)
      return { holds: (at: number) => at >= from, rates }
    }
    const start = secondsOfDay(k.start_time), end = secondsOfDay(k.end_time)
    return {
      holds: (at: number) => {
        const s = (at % 86_400_000) / 1000
        return end < start ? s >= start || s < end : s >= start && s < end
      },
      rates
    }
  })
  return (at) => {
    // Stryker disable next-line EqualityOperator: variants[0] is what the loop falls back to, so testing it changes nothing
    for (let i = variants.length - 1; i >= 0; i--) if (variants[i]!.holds(at)) return variants[i]!.rates
    return variants[0]!.rates
  }
}

type MatchLogic = ModelInfo["match"]

/** genai-prices' name matching (case-insensitive) as a function built once, for a name already lower-cased. */
const matcher = (logic: MatchLogic): (name: string) => boolean => {
  if ("or" in logic) {
    const each = logic.or.map(matcher)
    return (name) => each.some((m) => m(name))
  }
  if ("and" in logic) {
    const each = logic.and.map(matcher)
    return (name) => each.every((m) => m(name))
  }
  if ("equals" in logic) {
    const v = logic.equals.toLowerCase()
    return (name) => name === v
  }
  if ("starts_with" in logic) {
    const v = logic.starts_with.toLowerCase()
    return (name) => name.startsWith(v)
  }
  if ("ends_with" in logic) {
    const v = logic.ends_with.toLowerCase()
    return (name) => name.endsWith(v)
  }
  if ("contains" in logic) {
    const v = logic.contains.toLowerCase()
    return (name) => name.includes(v)
  }
  const regex = new RegExp(logic.regex)
  return (name) => regex.test(name)
}

/** Every model of the database with its matcher, in the database's order (built once per database). */
const scans = new WeakMap<object, ReadonlyArray<{ readonly model: ModelInfo; readonly matches: (name: string) => boolean }>>()
const scanOf = (providers: ReadonlyArray<Provider>) => {
  let scan = scans.get(providers)
  // Stryker disable next-line ConditionalExpression: the scan is built once only to save work; rebuilding it matches the same
  if (scan === undefined) {
    scan = providers.flatMap((p) => p.models.map((model) => ({ model, matches: matcher(model.match) })))
    // Stryker disable next-line CallExpression: as above, remembering the scan only saves work
    scans.set(providers, scan)
  }
  return scan
}

/**
 * The provider data `calcPrice` uses. No update is ever installed, so this is the data shipped in
 * the pinned package (the promise is already resolved; nothing is fetched).
 */
export const bundledDatabase = (): Promise<ReadonlyArray<Provider>> => waitForUpdate().then((data) => data ?? [])

/**
 * A model of the database for a name: the one genai-prices' own matching finds (the provider
 * the name implies), else the first model of any provider, in the database's order, whose
 * pattern matches the name (`codex-mini` is OpenAI's though OpenAI does not claim the name).
 */
const databaseModel = (providers: ReadonlyArray<Provider>, name: string): ModelInfo | undefined => {
  const found = calcPrice({ input_tokens: 1 }, name)
  if (found) return found.model
  const lower = name.toLowerCase().trim()
  return scanOf(providers).find((entry) => entry.matches(lower))?.model
}

/**
 * The rates of a model name: the operator's table (exactly, else the longest entry the name
 * extends), else the database for the name, else for the name without its last `-`, `@` or `:`
 * part, and so on (so a dated or tagged id the database does not list takes its model's price,
 * as it did with the hand-kept table). Undefined: a model nobody prices.
 */
export const resolveRates = (
  database: ReadonlyArray<Provider>,
  overrides: PriceTable,
  model: string
): ModelRates | undefined => {
  const own = lookupPrice(overrides, model)
  if (own) {
    const rates = fromOverride(own)
    return () => rates
  }
  for (let name = model; name.length > 0;) {
    const found = databaseModel(database, name)
    if (found) return databaseRates(found)
    const cut = Math.max(name.lastIndexOf("-"), name.lastIndexOf("@"), name.lastIndexOf(":"))
    if (cut <= 0) break
    name = name.slice(0, cut)
  }
  return undefined
}

/**
 * `resolveRates` over one table, remembering each model name's answer: signals name a handful
 * of models, and resolving one walks the database. At most `limit` names are remembered (then it
 * starts over), so arbitrary names sent by clients cannot grow it without bound.
 */
export const memoizedRates = (database: ReadonlyArray<Provider>, overrides: PriceTable, limit = 1_000) => {
  const known = new Map<string, ModelRates | undefined>()
  return (model: string): ModelRates | undefined => {
    const hit = known.get(model)
    // Stryker disable all: remembering only saves work (a fresh resolution answers the same, as the tests check); its bound is on memory
    if (hit !== undefined || known.has(model)) return hit
    const rates = resolveRates(database, overrides, model)
    if (known.size >= limit) known.clear()
    known.set(model, rates)
    // Stryker restore all
    return rates
  }
}

export interface Priced {
  readonly usd: number
  readonly estimated: boolean
  readonly model_known: boolean
}

const toNanoDollars = (usd: number) => Math.round(usd * 1e9) / 1e9

export interface PriceInput {
  readonly model?: string | undefined
  readonly tokensIn: number
  readonly tokensOut: number
  readonly cacheRead?: number | undefined
  readonly cacheWrite?: number | undefined
  readonly reportedUsd?: number | undefined
  /** When the call was made (epoch ms): a few models' prices depend on the date or the time of day. */
  readonly at: number
}

/**
 * The cost of one model call: as reported, else estimated from tokens, else 0; to the nano-dollar,
 * as every sum of costs is kept, so a session's cost is the sum of its events' costs.
 */
export const priceSignal = (lookup: (model: string) => ModelRates | undefined, input: PriceInput): Priced => {
  const rates = input.model === undefined ? undefined : lookup(input.model)
  const model_known = rates !== undefined
  if (input.reportedUsd !== undefined) return { usd: toNanoDollars(input.reportedUsd), estimated: false, model_known }
  if (!rates) return { usd: 0, estimated: false, model_known }
  if (input.tokensIn === 0 && input.tokensOut === 0) return { usd: 0, estimated: true, model_known }
  const usd = costAt(rates(input.at), {
    tokensIn: input.tokensIn,
    tokensOut: input.tokensOut,
    cacheRead: input.cacheRead ?? 0,
    cacheWrite: input.cacheWrite ?? 0
  })
  return { usd: toNanoDollars(usd), estimated: true, model_known }
}
