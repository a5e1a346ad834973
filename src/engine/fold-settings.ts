import { Config, Effect } from "effect"
import { defaultSpikeSettings } from "../domain/anomaly.ts"
import { defaultDriftSettings } from "../domain/drift-fold.ts"
import type { FoldSettings } from "../domain/user-state.ts"

/**
 * The fold's tunables from the environment. They change what the fold derives (drift, anomalies),
 * so a replay must run with the same values as the live nodes.
 */
export const foldSettings: Effect.Effect<FoldSettings, Config.ConfigError> = Effect.gen(function*() {
  const threshold = yield* Config.Number("DRIFT_THRESHOLD").pipe(Config.withDefault(defaultDriftSettings.threshold))
  const prompts = yield* Config.Int("DRIFT_PROMPTS").pipe(Config.withDefault(defaultDriftSettings.prompts))
  const factor = yield* Config.Number("SPIKE_FACTOR").pipe(Config.withDefault(defaultSpikeSettings.factor))
  const minSamples = yield* Config.Int("SPIKE_MIN_SAMPLES").pipe(Config.withDefault(defaultSpikeSettings.minSamples))
  return {
    drift: { threshold, prompts: Math.max(1, prompts) },
    spike: { ...defaultSpikeSettings, factor, minSamples: Math.max(1, minSamples) }
  }
})
