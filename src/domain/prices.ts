/**
 * Model prices in USD per million tokens, used to estimate `cost_usd` when an adapter reports
 * tokens and a model but no cost. Operators override or extend the table with MODEL_PRICES
 * (JSON: `{"model": {"input": 3, "output": 15}}`). A model is matched exactly, else by the
 * longest table entry it starts with (so dated ids like `claude-sonnet-4-20250514` match).
 */
export interface ModelPrice {
  readonly input: number
  readonly output: number
}

export type PriceTable = Readonly<Record<string, ModelPrice>>

export const defaultPrices: PriceTable = {
  // Anthropic
  "claude-opus-4-5": { input: 5, output: 25 },
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4": { input: 15, output: 75 },
  "claude-sonnet-4-5": { input: 3, output: 15 },
  "claude-sonnet-4": { input: 3, output: 15 },
  "claude-haiku-4-5": { input: 1, output: 5 },
  "claude-3-7-sonnet": { input: 3, output: 15 },
  "claude-3-5-sonnet": { input: 3, output: 15 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  // OpenAI
  "gpt-5": { input: 1.25, output: 10 },
  "gpt-5-mini": { input: 0.25, output: 2 },
  "gpt-5-nano": { input: 0.05, output: 0.4 },
  "gpt-5-codex": { input: 1.25, output: 10 },
  "gpt-4.1": { input: 2, output: 8 },
  "gpt-4.1-mini": { input: 0.4, output: 1.6 },
  "gpt-4.1-nano": { input: 0.1, output: 0.4 },
  "gpt-4o": { input: 2.5, output: 10 },
  "gpt-4o-mini": { input: 0.15, output: 0.6 },
  "o3": { input: 2, output: 8 },
  "o4-mini": { input: 1.1, output: 4.4 },
  "codex-mini": { input: 1.5, output: 6 },
  // Google
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4 },
  // Open models (typical hosted prices)
  "deepseek-v3": { input: 0.27, output: 1.1 },
  "deepseek-r1": { input: 0.55, output: 2.19 },
  "llama-3.3-70b": { input: 0.6, output: 0.6 },
  "llama-3.1-405b": { input: 3, output: 3 },
  "qwen3-coder": { input: 0.4, output: 1.6 },
  "mistral-large": { input: 2, output: 6 },
  "codestral": { input: 0.3, output: 0.9 }
}

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

/**
 * `lookupPrice` over one table, remembering each model name's answer: signals name a handful of
 * models, and a dated name (`claude-sonnet-4-20250514`) otherwise costs a scan of the table per
 * signal. At most `limit` names are remembered (then it starts over), so arbitrary names sent by
 * clients cannot grow it without bound.
 */
export const memoizedLookup = (table: PriceTable, limit = 1_000) => {
  const known = new Map<string, ModelPrice | undefined>()
  return (model: string): ModelPrice | undefined => {
    const hit = known.get(model)
    if (hit !== undefined || known.has(model)) return hit
    const price = lookupPrice(table, model)
    if (known.size >= limit) known.clear()
    known.set(model, price)
    return price
  }
}

export interface Priced {
  readonly usd: number
  readonly estimated: boolean
  readonly model_known: boolean
}

const toNanoDollars = (usd: number) => Math.round(usd * 1e9) / 1e9

/**
 * The cost of one model call: as reported, else estimated from tokens, else 0; to the nano-dollar,
 * as every sum of costs is kept, so a session's cost is the sum of its events' costs.
 */
export const priceSignal = (
  lookup: (model: string) => ModelPrice | undefined,
  input: { readonly model?: string | undefined; readonly tokensIn: number; readonly tokensOut: number; readonly reportedUsd?: number | undefined }
): Priced => {
  const price = input.model === undefined ? undefined : lookup(input.model)
  const model_known = price !== undefined
  if (input.reportedUsd !== undefined) return { usd: toNanoDollars(input.reportedUsd), estimated: false, model_known }
  if (!price) return { usd: 0, estimated: false, model_known }
  const usd = (input.tokensIn * price.input + input.tokensOut * price.output) / 1_000_000
  return { usd: toNanoDollars(usd), estimated: true, model_known }
}
