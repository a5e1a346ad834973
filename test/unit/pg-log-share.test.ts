import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Holder, planShare, shares } from "../../src/log/pg-log-share.ts"

const node = (id: number, owned: number, rebalances = true): Holder => ({ id, owned, rebalances })

/**
 * Runs rounds of every node in turn (each sees what the others did before it) until a whole
 * pass moves nothing; answers each node's count and how many partitions moved in all.
 */
const settle = (partitions: number, owned: ReadonlyArray<number>) => {
  const counts = [...owned]
  let moves = 0
  for (let pass = 0; pass < 50; pass++) {
    let moved = 0
    for (let id = 0; id < counts.length; id++) {
      const free = partitions - counts.reduce((a, b) => a + b, 0)
      const plan = planShare(partitions, free, { id, owned: counts[id]! }, counts.map((c, i) => node(i, c)))
      counts[id] = counts[id]! + plan.take - plan.release
      moved += plan.take + plan.release
    }
    moves += moved
    if (moved === 0) return { counts, moves, passes: pass }
  }
  throw new Error(`did not settle: ${counts.join(",")}`)
}

describe("PgLog's fair share", () => {
  it("splits the partitions as evenly as they go, the extra ones to the nodes that hold most", () => {
    expect([...shares(8, [node(1, 8), node(2, 0)]).values()]).toEqual([4, 4])
    expect(shares(8, [node(1, 0), node(2, 4), node(3, 4)])).toEqual(new Map([[2, 3], [3, 3], [1, 2]]))
    expect(shares(2, [node(1, 0), node(2, 0), node(3, 0)])).toEqual(new Map([[1, 1], [2, 1], [3, 0]]))
  })

  it("a node alone takes every partition", () => {
    expect(planShare(8, 8, { id: 1, owned: 0 }, [])).toMatchObject({ members: 1, share: 8, take: 8, release: 0, awaiting: false })
  })

  it("a node that holds all lets half go to one that joins, which waits for them meanwhile", () => {
    const survivor = planShare(8, 0, { id: 1, owned: 8 }, [node(2, 0)])
    expect(survivor).toMatchObject({ members: 2, share: 4, release: 4, take: 0 })
    const joined = planShare(8, 0, { id: 2, owned: 0 }, [node(1, 8)])
    expect(joined).toMatchObject({ share: 4, take: 0, release: 0, awaiting: true })
    // Once let go, the joined node takes them; the other lets go of nothing more.
    expect(planShare(8, 4, { id: 2, owned: 0 }, [node(1, 4)])).toMatchObject({ take: 4, awaiting: false })
    expect(planShare(8, 4, { id: 1, owned: 4 }, [node(2, 0)])).toMatchObject({ take: 0, release: 0 })
  })

  it("lets go of nothing that free partitions already make up for", () => {
    expect(planShare(8, 2, { id: 1, owned: 6 }, [node(2, 0)])).toMatchObject({ share: 4, release: 2 })
    expect(planShare(8, 4, { id: 1, owned: 4 }, [node(2, 0)]).release).toBe(0)
  })

  it("does not wait for a node that never lets go (one without the member lock)", () => {
    const plan = planShare(8, 0, { id: 2, owned: 0 }, [node(1, 8, false)])
    expect(plan).toMatchObject({ share: 4, take: 0, awaiting: false })
  })

  it("takes a dead node's partitions up to the new share", () => {
    // Three nodes (3, 3, 2), the third dies: its two are free, each survivor takes one.
    expect(planShare(8, 2, { id: 1, owned: 3 }, [node(2, 3)])).toMatchObject({ share: 4, take: 1 })
    expect(planShare(8, 2, { id: 2, owned: 3 }, [node(1, 3)])).toMatchObject({ share: 4, take: 1 })
  })

  it("a balanced cluster moves nothing", () => {
    for (const counts of [[4, 4], [3, 3, 2], [2, 3, 3], [1, 1, 1, 1, 1, 1, 1, 1, 0]]) {
      expect(settle(8, counts).moves).toBe(0)
    }
  })

  it("any cluster settles with every node within one of the others, every partition held once", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 64 }),
      fc.array(fc.nat(64), { minLength: 1, maxLength: 9 }),
      (partitions, raw) => {
        // Holdings the partitions can have: at most `partitions` in all.
        let left = partitions
        const owned = raw.map((n) => {
          const c = Math.min(n, left)
          left -= c
          return c
        })
        const { counts } = settle(partitions, owned)
        expect(counts.reduce((a, b) => a + b, 0)).toBe(partitions)
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1)
      }
    ))
  })
})
