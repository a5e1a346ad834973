import { describe, expect, it } from "@effect/vitest"
import { getHeapStatistics } from "node:v8"
import { ConfigProvider, Effect, Layer } from "effect"
import { heapSlack, IdleCompaction } from "../../src/engine/idle-compaction.ts"

const mb = 1024 * 1024

/** Grows the heap the way a burst of signals does: many short-lived objects, some promoted, then dropped. */
const burst = () => {
  let kept: Array<Array<{ readonly id: string; readonly n: number }>> = []
  for (let i = 0; i < 60; i++) {
    kept.push(Array.from({ length: 40_000 }, (_, n) => ({ id: `user_${i}_${n}`, n })))
  }
  const size = kept.length
  kept = []
  return size
}

describe("idle compaction", () => {
  it.live("gives the heap's slack back once the process has been idle for IDLE_COMPACTION_AFTER", () =>
    Effect.gen(function*() {
      expect(burst()).toBe(60)
      const grown = getHeapStatistics().total_heap_size
      expect(heapSlack()).toBeGreaterThan(32 * mb)
      // Idle (the test only sleeps) for longer than the setting: the layer compacts once.
      yield* Effect.sleep("4 seconds").pipe(
        Effect.provide(IdleCompaction.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { IDLE_COMPACTION_AFTER: "1 second" } })))))
      )
      const after = getHeapStatistics().total_heap_size
      expect(grown - after).toBeGreaterThan(32 * mb)
      expect(heapSlack()).toBeLessThan(32 * mb)
    }), 20_000)

  it.live("does nothing when disabled", () =>
    Effect.gen(function*() {
      expect(burst()).toBe(60)
      const slack = heapSlack()
      expect(slack).toBeGreaterThan(32 * mb)
      yield* Effect.sleep("3 seconds").pipe(
        Effect.provide(IdleCompaction.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { IDLE_COMPACTION_AFTER: "0 seconds" } })))))
      )
      expect(heapSlack()).toBeGreaterThan(32 * mb)
    }), 20_000)
})
