import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Exit, Fiber, Scope } from "effect"
import { makeBatcher } from "../../src/lib/batcher.ts"

class Down {
  readonly _tag = "Down"
}

describe("makeBatcher (micro-batched appends)", () => {
  it("writes concurrent calls together and answers each its own results, in order", async () => {
    const writes: Array<ReadonlyArray<number>> = []
    const results = await Effect.runPromise(
      Effect.gen(function*() {
        const call = yield* makeBatcher({
          maxItems: 500,
          window: "20 millis",
          write: (items: ReadonlyArray<number>) => Effect.sync(() => (writes.push(items), items.map((n) => n * 10))),
          closed: () => new Down()
        })
        return yield* Effect.forEach([[1, 2], [3], [], [4, 5, 6]], call, { concurrency: "unbounded" })
      }).pipe(Effect.scoped)
    )
    expect(results).toEqual([[10, 20], [30], [], [40, 50, 60]])
    expect(writes).toEqual([[1, 2, 3, 4, 5, 6]])
  })

  // Under the test clock time stands still: the calls end only if the batches close without the window.
  it.effect("closes a batch at maxItems without waiting for the window", () =>
    Effect.gen(function*() {
      const writes: Array<number> = []
      const call = yield* makeBatcher({
        maxItems: 3,
        window: "10 seconds",
        write: (items: ReadonlyArray<number>) => Effect.sync(() => (writes.push(items.length), items)),
        closed: () => new Down()
      })
      const calls = yield* Effect.forEach([1, 2, 3, 4, 5, 6], (n) => call([n]), { concurrency: "unbounded" }).pipe(Effect.forkChild)
      for (let turn = 0; turn < 100 && writes.length < 2; turn++) yield* Effect.yieldNow
      expect(writes).toEqual([3, 3])
      expect(yield* Fiber.join(calls)).toEqual([[1], [2], [3], [4], [5], [6]])
      expect(yield* Clock.currentTimeMillis).toBe(0)
    }).pipe(Effect.scoped))

  it("fails every call of a failed write, and the next batch still runs", async () => {
    let fail = true
    const exits = await Effect.runPromise(
      Effect.gen(function*() {
        const call = yield* makeBatcher({
          maxItems: 500,
          window: "5 millis",
          write: (items: ReadonlyArray<number>) => (fail ? Effect.fail(new Down()) : Effect.succeed(items)),
          closed: () => new Down()
        })
        const first = yield* Effect.forEach([[1], [2]], (i) => Effect.exit(call(i)), { concurrency: "unbounded" })
        fail = false
        return [...first, yield* Effect.exit(call([3]))]
      }).pipe(Effect.scoped)
    )
    expect(exits.map((e) => e._tag)).toEqual(["Failure", "Failure", "Success"])
  })

  it("fails calls made after its scope closed", async () => {
    const exit = await Effect.runPromise(
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const call = yield* makeBatcher({
          maxItems: 500,
          window: "5 millis",
          write: (items: ReadonlyArray<number>) => Effect.succeed(items),
          closed: () => new Down()
        }).pipe(Scope.provide(scope))
        yield* Scope.close(scope, Exit.void)
        return yield* Effect.exit(call([1]))
      })
    )
    expect(Exit.isFailure(exit)).toBe(true)
  })
})
