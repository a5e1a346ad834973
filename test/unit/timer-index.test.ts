import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { makeTimerIndex, type Timed } from "../../src/engine/timer-index.ts"

interface T extends Timed {
  readonly id: string
}

type Op =
  | { readonly op: "set"; readonly user: number; readonly dues: ReadonlyArray<number> }
  | { readonly op: "take"; readonly advance: number }

const key = (t: T) => `${t.userId}/${t.id}/${t.due}`

describe("timer index", () => {
  it("takes exactly the timers a scan of every user would take, in any order of sets and sweeps", () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        op: fc.constant("set" as const),
        user: fc.integer({ min: 0, max: 7 }),
        // Dues around the clock: past, this second, later seconds, far later.
        dues: fc.array(fc.integer({ min: -3_000, max: 20_000 }), { maxLength: 3 })
      }),
      // Sweeps usually a second apart, sometimes after a long pause (a stalled node, a test clock).
      fc.record({ op: fc.constant("take" as const), advance: fc.oneof(fc.integer({ min: 0, max: 2_500 }), fc.integer({ min: 0, max: 200_000 })) })
    )
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.array(op, { maxLength: 60 }), (start, ops) => {
        const index = makeTimerIndex<T>()
        const model = new Map<string, ReadonlyArray<T>>()
        let now = start
        let n = 0
        for (const o of ops) {
          if (o.op === "set") {
            const userId = `u${o.user}`
            const timers = o.dues.map((d) => ({ userId, id: `t${n++}`, due: now + d }))
            index.set(userId, timers)
            if (timers.length === 0) model.delete(userId)
            else model.set(userId, timers)
          } else {
            now += o.advance
            const expected: Array<T> = []
            for (const [userId, timers] of model) {
              expected.push(...timers.filter((t) => t.due <= now))
              const later = timers.filter((t) => t.due > now)
              if (later.length === 0) model.delete(userId)
              else model.set(userId, later)
            }
            expect(index.takeDue(now).map(key).sort()).toEqual(expected.map(key).sort())
          }
          let size = 0
          for (const timers of model.values()) size += timers.length
          expect(index.size()).toBe(size)
          for (let u = 0; u < 8; u++) expect(index.get(`u${u}`).map(key).sort()).toEqual((model.get(`u${u}`) ?? []).map(key).sort())
        }
      }),
      { numRuns: 500 }
    )
  })

  it("keeps a user's later timers after taking the due one", () => {
    const index = makeTimerIndex<T>()
    index.set("a", [{ userId: "a", id: "s1", due: 1_000 }, { userId: "a", id: "s2", due: 5_000 }])
    expect(index.takeDue(999)).toEqual([])
    expect(index.takeDue(1_000).map((t) => t.id)).toEqual(["s1"])
    expect(index.get("a").map((t) => t.id)).toEqual(["s2"])
    expect(index.takeDue(4_999)).toEqual([])
    expect(index.takeDue(5_000).map((t) => t.id)).toEqual(["s2"])
    expect(index.size()).toBe(0)
  })

  it("hands out the due timers earliest second first, whatever order they were set in", () => {
    const index = makeTimerIndex<T>()
    for (const [user, due] of [["c", 5_000], ["a", 1_000], ["b", 3_000], ["d", 9_000]] as const) index.set(user, [{ userId: user, id: `s_${user}`, due }])
    expect(index.takeDue(6_000).map((t) => t.userId)).toEqual(["a", "b", "c"])
    expect(index.get("d").map((t) => t.id)).toEqual(["s_d"])
  })
})
