import { describe, expect, it } from "@effect/vitest"
import { getHeapStatistics } from "node:v8"
import { ConfigProvider, Effect, Layer, Logger } from "effect"
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

/** Runs IdleCompaction with the given setting while the test sleeps (idle); answers what it logged. */
const idleFor = (seconds: number, after: string) =>
  Effect.gen(function*() {
    const logged: Array<string> = []
    const capture = Logger.make(({ message }) => void logged.push(Array.isArray(message) ? message.join(" ") : String(message)))
    yield* Effect.sleep(`${seconds} seconds`).pipe(
      Effect.provide(IdleCompaction.pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { IDLE_COMPACTION_AFTER: after } }))),
        Layer.provide(Logger.layer([capture]))
      )),
      Effect.provide(Logger.layer([capture]))
    )
    return logged
  })

describe("idle compaction", () => {
  it.live("gives the heap's slack back once the process has been idle for IDLE_COMPACTION_AFTER", () =>
    Effect.gen(function*() {
      expect(burst()).toBe(60)
      const grown = getHeapStatistics().total_heap_size
      expect(heapSlack()).toBeGreaterThan(32 * mb)
      const logged = yield* idleFor(4, "1 second")
      expect(logged.filter((m) => /heap compacted/.test(m))).toHaveLength(1)
      expect(grown - getHeapStatistics().total_heap_size).toBeGreaterThan(32 * mb)
    }), 20_000)

  it.live("does nothing when disabled", () =>
    Effect.gen(function*() {
      expect(burst()).toBe(60)
      const logged = yield* idleFor(3, "0 seconds")
      expect(logged.filter((m) => /heap compacted/.test(m))).toEqual([])
    }), 20_000)
})
