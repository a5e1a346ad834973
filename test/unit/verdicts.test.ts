import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import type { Outcome } from "../../src/domain/verdict.ts"
import { VerdictRegistry } from "../../src/engine/verdicts.ts"

const run = <A>(body: (registry: VerdictRegistry["Service"]) => Effect.Effect<A>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* body(yield* VerdictRegistry)
    }).pipe(Effect.provide(VerdictRegistry.layer))
  )

const verdict = (signal_id: string): Outcome => ({ ok: true, signal_id, session_id: "sess_1" })

describe("VerdictRegistry", () => {
  it("answers a wait with its outcome, and a wait whose deadline passed with nothing", async () => {
    const [answered, expired] = await run((registry) =>
      Effect.gen(function*() {
        const now = Date.now()
        const a = yield* registry.register("sig_a", now + 60_000)
        const b = yield* registry.register("sig_b", now + 50)
        yield* registry.complete([verdict("sig_a")])
        return [yield* Deferred.await(a), yield* Deferred.await(b)] as const
      })
    )
    expect(answered).toEqual(verdict("sig_a"))
    expect(expired).toBeUndefined()
  })

  it.effect("a short wait registered after long ones still ends at its own deadline", () =>
    Effect.gen(function*() {
      const registry = yield* VerdictRegistry
      const now = yield* Clock.currentTimeMillis
      // Long waits first, and sweeps (every 25 ms) that see only them.
      const long = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => `sig_long_${i}`), (id) => registry.register(id, now + 60_000))
      yield* TestClock.adjust("100 millis")
      const short = yield* registry.register("sig_short", now + 150)
      yield* TestClock.adjust("100 millis")
      yield* Effect.yieldNow
      // Answered (with nothing) at its own deadline; the long waits still wait.
      expect(yield* Deferred.isDone(short)).toBe(true)
      expect(yield* Deferred.await(short)).toBeUndefined()
      for (const wait of long) expect(yield* Deferred.isDone(wait)).toBe(false)
    }).pipe(Effect.provide(VerdictRegistry.layer)))

  it("waits with different deadlines each end at their own", { timeout: 10_000 }, async () => {
    const answers = await run((registry) =>
      Effect.gen(function*() {
        const now = Date.now()
        const waits = yield* Effect.forEach([50, 300, 150], (ms, i) => registry.register(`sig_${i}`, now + ms))
        return yield* Effect.forEach(waits, Deferred.await)
      })
    )
    expect(answers).toEqual([undefined, undefined, undefined])
  })

  it("a wait that expired is answered once; its outcome arriving later is kept for a late wait", async () => {
    const [expired, late] = await run((registry) =>
      Effect.gen(function*() {
        const wait = yield* registry.register("sig_c", Date.now() + 30)
        const first = yield* Deferred.await(wait)
        yield* registry.complete([verdict("sig_c")])
        return [first, yield* registry.await("sig_c", "1 second")] as const
      })
    )
    expect(expired).toBeUndefined()
    expect(late).toEqual(Option.some(verdict("sig_c")))
  })

  it("waits on one id are answered one outcome each, in the order they were registered", async () => {
    const duplicate = (signal_id: string): Outcome => ({ ok: true, signal_id, session_id: "sess_1", duplicate: true })
    const answers = await run((registry) =>
      Effect.gen(function*() {
        const now = Date.now()
        const waits = yield* Effect.forEach([0, 1, 2], () => registry.register("sig_k", now + 60_000))
        yield* registry.complete([verdict("sig_k"), duplicate("sig_k")])
        yield* registry.complete([duplicate("sig_k")])
        return yield* Effect.forEach(waits, Deferred.await)
      })
    )
    expect(answers).toEqual([verdict("sig_k"), duplicate("sig_k"), duplicate("sig_k")])
  })

  it("a cancelled wait is answered with nothing and takes no outcome from the waits after it", async () => {
    const answers = await run((registry) =>
      Effect.gen(function*() {
        const now = Date.now()
        const [a, b, c] = yield* Effect.forEach([0, 1, 2], () => registry.register("sig_x", now + 60_000))
        yield* registry.cancel("sig_x", b!)
        yield* registry.cancel("sig_x", a!)
        yield* registry.complete([verdict("sig_x")])
        return yield* Effect.forEach([a!, b!, c!], Deferred.await)
      })
    )
    expect(answers).toEqual([undefined, undefined, verdict("sig_x")])
  })

  it("an expired wait in the middle of a queue leaves the others queued in order", { timeout: 10_000 }, async () => {
    const answers = await run((registry) =>
      Effect.gen(function*() {
        const now = Date.now()
        const first = yield* registry.register("sig_q", now + 60_000)
        const short = yield* registry.register("sig_q", now + 30)
        const last = yield* registry.register("sig_q", now + 60_000)
        const expired = yield* Deferred.await(short)
        yield* registry.complete([verdict("sig_q"), { ...verdict("sig_q"), session_id: "sess_2" }])
        return [yield* Deferred.await(first), expired, yield* Deferred.await(last)]
      })
    )
    expect(answers).toEqual([verdict("sig_q"), undefined, { ...verdict("sig_q"), session_id: "sess_2" }])
  })
})
