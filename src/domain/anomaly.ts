/**
 * token_spike: per user and environment, a baseline of tokens per signal (tokens_in + tokens_out,
 * over the signals that report tokens), kept in the actor. Until `window` observations it is
 * their mean; after that an exponential moving average with weight 1/`window`, so it follows a
 * user's drift in habits without remembering every signal. An observation above `factor` times the
 * baseline, once at least `minSamples` observations formed it, is a spike. The spike itself then
 * enters the baseline (it happened).
 */
export interface TokenBaseline {
  /** The baseline: mean tokens per signal. */
  readonly avg: number
  /** Observations so far (capped at the window; only whether it reached minSamples matters after). */
  readonly n: number
}

export interface SpikeSettings {
  readonly factor: number
  readonly minSamples: number
  readonly window: number
}

export const defaultSpikeSettings: SpikeSettings = { factor: 3, minSamples: 5, window: 20 }

export interface Spike {
  readonly baseline_avg: number
  readonly observed: number
  readonly deviation_pct: number
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits

/** The next baseline after an observation, and the spike when the observation is one. */
export const observeTokens = (
  baseline: TokenBaseline | undefined,
  observed: number,
  settings: SpikeSettings
): { readonly baseline: TokenBaseline; readonly spike: Spike | undefined } => {
  const current = baseline ?? { avg: 0, n: 0 }
  const spike = current.n >= settings.minSamples && current.avg > 0 && observed > settings.factor * current.avg
    ? {
      baseline_avg: round(current.avg, 2),
      observed,
      deviation_pct: round(((observed - current.avg) / current.avg) * 100, 1)
    }
    : undefined
  const n = Math.min(current.n + 1, settings.window)
  return { baseline: { avg: round(current.avg + (observed - current.avg) / n, 6), n }, spike }
}
