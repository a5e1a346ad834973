import { describe, expect, it } from "@effect/vitest"
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
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

/**
 * Runs `body` with IdleCompaction running (with the given setting), handing it what IdleCompaction
 * has logged so far; answers what it logged and what `body` answered.
 */
const withCompaction = <A>(after: string, body: (logged: ReadonlyArray<string>) => Effect.Effect<A>) =>
  Effect.gen(function*() {
    const logged: Array<string> = []
    const capture = Logger.make(({ message }) => void logged.push(Array.isArray(message) ? message.join(" ") : String(message)))
    const result = yield* body(logged).pipe(
      Effect.provide(IdleCompaction.pipe(
        Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { IDLE_COMPACTION_AFTER: after } }))),
        Layer.provide(Logger.layer([capture]))
      )),
      Effect.provide(Logger.layer([capture]))
    )
    return { logged, result }
  })

const compactions = (logged: ReadonlyArray<string>) => logged.filter((m) => /heap compacted/.test(m))

/**
 * Stays idle until IdleCompaction logs a compaction (looked for every 100 ms; a failure after
 * `within`), then for two more of its checks (one a second): a second compaction in the same idle
 * period would come at one of them.
 */
const compactedOnce = (logged: ReadonlyArray<string>, within: `${number} seconds`) =>
  Effect.sleep("100 millis").pipe(
    Effect.repeat({ until: () => compactions(logged).length > 0 }),
    Effect.timeoutOrElse({
      duration: within,
      orElse: () => Effect.die(new Error(`no compaction logged within ${within}; logged: ${JSON.stringify(logged)}`))
    }),
    Effect.andThen(Effect.sleep("2 seconds"))
  )

/**
 * What V8's own collections do after a burst: a major collection, then, a few seconds later,
 * another, which shrinks the heap to what is live (measured: 137 MB → 10 MB) while the pages
 * stay resident. The pauses are V8's timing, which this imitates, not a wait for a condition.
 */
const ownCollections = Effect.gen(function*() {
  setFlagsFromString("--expose-gc")
  const gc = runInNewContext("gc") as (options?: { type: "major"; execution: "async" }) => void
  gc()
  yield* Effect.sleep("3 seconds")
  gc({ type: "major", execution: "async" })
  yield* Effect.sleep("1 second")
})

describe("idle compaction", () => {
  it.live("gives the heap's slack back once the process has been idle for IDLE_COMPACTION_AFTER", () =>
    Effect.gen(function*() {
      expect(burst()).toBe(60)
      const grown = getHeapStatistics().total_heap_size
      expect(heapSlack()).toBeGreaterThan(32 * mb)
      const { logged } = yield* withCompaction("1 second", (logged) => compactedOnce(logged, "12 seconds"))
      expect(compactions(logged)).toHaveLength(1)
      expect(grown - getHeapStatistics().total_heap_size).toBeGreaterThan(32 * mb)
    }), 20_000)

  it.live("gives resident memory back after a burst even when V8's own collection has already shrunk the heap", () =>
    Effect.gen(function*() {
      // Idle for 6 s: after V8's collections, so only the resident memory shows what to give back.
      const { logged, result } = yield* withCompaction("6 seconds", (logged) =>
        Effect.gen(function*() {
          expect(burst()).toBe(60)
          yield* ownCollections
          const slack = heapSlack()
          const resident = process.memoryUsage.rss()
          yield* compactedOnce(logged, "15 seconds")
          return { slack, resident, after: process.memoryUsage.rss() }
        }))
      expect(result.slack).toBeLessThan(32 * mb)
      expect(compactions(logged)).toHaveLength(1)
      expect(result.resident - result.after).toBeGreaterThan(64 * mb)
    }), 30_000)

  it.live("does nothing when disabled", () =>
    Effect.gen(function*() {
      expect(burst()).toBe(60)
      // Checks that nothing happens, so it waits: enabled, a compaction comes within about 2 s of
      // the burst (the first test's), at a check a second.
      const { logged } = yield* withCompaction("0 seconds", () => Effect.sleep("3 seconds"))
      expect(compactions(logged)).toEqual([])
    }), 20_000)
})
