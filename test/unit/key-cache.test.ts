import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeKeyCache } from "../../src/http/key-cache.ts"

/**
 * A cache over a lookup the test answers by hand: each lookup waits on its own Deferred, so a
 * test decides when (and with what) each one answers. `lookups` lists the keys looked up.
 */
const outage = new Error("connect ECONNREFUSED")

const setup = (options: { readonly capacity?: number; readonly ttlMs?: number; readonly graceMs?: number } = {}) => {
  let clock = 1_000
  const lookups: Array<string> = []
  const answers: Array<Deferred.Deferred<string>> = []
  const cache = makeKeyCache<string>({
    lookup: (key) =>
      Effect.suspend(() => {
        lookups.push(key)
        const answer = Deferred.makeUnsafe<string>()
        answers.push(answer)
        return Deferred.await(answer)
      }),
    capacity: options.capacity ?? 100,
    timeToLiveMs: () => options.ttlMs ?? 60_000,
    ...(options.graceMs === undefined ? {} : { outageGraceMs: options.graceMs, isOutage: (d: unknown) => d === outage }),
    now: () => clock
  })
  /** Answers the n-th lookup (in the order they started). */
  const answer = (n: number, value: string) => Effect.runSync(Deferred.succeed(answers[n]!, value))
  const fail = (n: number) => Effect.runSync(Deferred.die(answers[n]!, new Error("database unreachable")))
  /** Fails the n-th lookup as an outage does. */
  const unreachable = (n: number) => Effect.runSync(Deferred.die(answers[n]!, outage))
  /** A get on a fiber of its own, once whatever it started has had its turn (a lookup starts on its own fiber). */
  const fork = async (key: string) => {
    const fiber = Effect.runFork(cache.get(key))
    await new Promise((resolve) => setTimeout(resolve, 1))
    return fiber
  }
  const join = <A>(fiber: Fiber.Fiber<A>) => Effect.runPromise(Fiber.join(fiber))
  /** A get the cache answers without a lookup; fails the test otherwise. */
  const cached = async (key: string) => {
    const before = lookups.length
    const fiber = await fork(key)
    expect(lookups.length, `"${key}" was looked up`).toBe(before)
    return join(fiber)
  }
  /** A get that looks the key up, answered with `value` at once; fails the test if it was cached. */
  const lookedUp = async (key: string, value: string) => {
    const before = lookups.length
    const fiber = await fork(key)
    expect(lookups.length, `"${key}" was not looked up`).toBe(before + 1)
    answer(before, value)
    return join(fiber)
  }
  /** A get that looks the key up and meets an outage: its exit. */
  const duringOutage = async (key: string) => {
    const before = lookups.length
    const fiber = await fork(key)
    expect(lookups.length, `"${key}" was not looked up`).toBe(before + 1)
    unreachable(before)
    return Effect.runPromise(Fiber.await(fiber))
  }
  return { cache, lookups, answer, fail, fork, join, cached, lookedUp, duringOutage, advance: (ms: number) => void (clock += ms) }
}

describe("key cache", () => {
  it("concurrent gets of one key share one lookup, and the answer is kept", async () => {
    const t = setup()
    const first = await t.fork("lic_a")
    const second = await t.fork("lic_a")
    expect(t.lookups).toEqual(["lic_a"])
    t.answer(0, "alice")
    expect([await t.join(first), await t.join(second)]).toEqual(["alice", "alice"])
    expect(await t.cached("lic_a")).toBe("alice")
  })

  it("an answer is looked up again once its time to live has passed, and swept", async () => {
    const t = setup({ ttlMs: 5_000 })
    await t.lookedUp("lic_a", "alice")
    t.advance(4_999)
    expect(await t.cached("lic_a")).toBe("alice")
    t.advance(1)
    t.cache.sweep()
    expect(t.cache.size()).toBe(0)
    expect(await t.lookedUp("lic_a", "alice again")).toBe("alice again")
  })

  it("clear drops what is kept; a lookup in flight answers its callers but is not kept", async () => {
    const t = setup()
    await t.lookedUp("lic_a", "old alice")
    const inFlight = await t.fork("lic_b")
    t.cache.clear()
    t.answer(1, "old bob")
    expect(await t.join(inFlight)).toBe("old bob")
    expect(t.cache.size()).toBe(0)
    const a = await t.fork("lic_a")
    const b = await t.fork("lic_b")
    expect(t.lookups).toEqual(["lic_a", "lic_b", "lic_a", "lic_b"])
    t.answer(2, "new alice")
    t.answer(3, "new bob")
    expect([await t.join(a), await t.join(b)]).toEqual(["new alice", "new bob"])
    expect(await t.cached("lic_b")).toBe("new bob")
  })

  it("a failed lookup fails its callers and is not kept", async () => {
    const t = setup()
    const first = await t.fork("lic_a")
    const second = await t.fork("lic_a")
    t.fail(0)
    for (const fiber of [first, second]) {
      const exit = await Effect.runPromise(Fiber.await(fiber))
      expect(Exit.isFailure(exit)).toBe(true)
    }
    expect(await t.lookedUp("lic_a", "alice")).toBe("alice")
  })

  it("a lookup is not interrupted with the caller that started it: the others still get the answer", async () => {
    const t = setup()
    const starter = await t.fork("lic_a")
    const other = await t.fork("lic_a")
    const interrupted = Effect.runPromise(Fiber.interrupt(starter))
    t.answer(0, "alice")
    await interrupted
    expect(await t.join(other)).toBe("alice")
    expect(await t.cached("lic_a")).toBe("alice")
  })

  it("over capacity, the least recently used answer goes first", async () => {
    const t = setup({ capacity: 2 })
    await t.lookedUp("lic_a", "LIC_A")
    await t.lookedUp("lic_b", "LIC_B")
    expect(await t.cached("lic_a")).toBe("LIC_A") // a is now more recent than b
    await t.lookedUp("lic_c", "LIC_C")
    expect(await t.cached("lic_a")).toBe("LIC_A")
    expect(await t.cached("lic_c")).toBe("LIC_C")
    await t.fork("lic_b")
    expect(t.lookups).toEqual(["lic_a", "lic_b", "lic_c", "lic_b"])
  })

  it("a time to live of 0 keeps nothing", async () => {
    const t = setup({ ttlMs: 0 })
    await t.lookedUp("lic_a", "alice")
    expect(t.cache.size()).toBe(0)
    await t.lookedUp("lic_a", "alice")
  })

  it("through an outage a key's last answer stands in for its lookup, within the grace, never after a clear", async () => {
    const t = setup({ ttlMs: 1_000, graceMs: 60_000 })
    await t.lookedUp("lic_a", "alice")
    await t.lookedUp("lic_b", "bob")
    // Unheard changes: every key is looked up again; during an outage the last answers stand in.
    t.cache.expire()
    expect(await t.duringOutage("lic_a")).toEqual(Exit.succeed("alice"))
    t.advance(59_999)
    t.cache.sweep()
    expect(await t.duringOutage("lic_b")).toEqual(Exit.succeed("bob"))
    t.advance(1)
    expect(Exit.isFailure(await t.duringOutage("lic_a"))).toBe(true)
    // A failure that is not an outage never gets a stand-in.
    await t.lookedUp("lic_c", "carol")
    t.advance(1_000)
    const other = await t.fork("lic_c")
    t.fail(t.lookups.length - 1)
    expect(Exit.isFailure(await Effect.runPromise(Fiber.await(other)))).toBe(true)
    // A change announced (clear) drops the stand-ins too: a revoked key gets none.
    await t.lookedUp("lic_d", "dave")
    t.cache.clear()
    expect(Exit.isFailure(await t.duringOutage("lic_d"))).toBe(true)
  })

  it("a grace of 0 gives no stand-in", async () => {
    const t = setup({ ttlMs: 1_000, graceMs: 0 })
    await t.lookedUp("lic_a", "alice")
    t.advance(1_000)
    expect(Exit.isFailure(await t.duringOutage("lic_a"))).toBe(true)
  })
})
