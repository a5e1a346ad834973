import { describe, expect, it } from "vitest"
import { usersWithKeys } from "../support/cluster.ts"
import { bootstrapOrg, call, freshDatabase, startServer, type TestServer } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"
import { walk } from "./activity-helpers.ts"

/** The partitions a node says it owns when it is ready (undefined while it is not). */
const owned = async (node: TestServer): Promise<ReadonlyArray<number> | undefined> => {
  const res = await call(node, "GET", "/readyz")
  return res.status === 200 ? res.body.checks.partitions.owned : undefined
}

/** Each node ready, owning `share` partitions, and together every partition once. */
const shared = (share: number, partitions: number) => (all: ReadonlyArray<ReadonlyArray<number> | undefined>) =>
  all.every((o) => o?.length === share) && new Set(all.flatMap((o) => o ?? [])).size === partitions

describe("PgLog partitions rebalance across the live nodes", () => {
  it("a node joining one that owns all, and that node restarted: 4/4 of 8 within 10 s, every signal kept once", { timeout: 180_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const env = { LOG_PARTITIONS: "8", CLUSTER_SECRET: "rebalance-test-secret-shared-by-the-nodes" }
    const a = await startServer({ databaseUrl, env })
    let b: TestServer | undefined
    try {
      await waitFor(() => owned(a), (o) => o?.length === 8, { what: "node A to own every partition" })
      const org = await bootstrapOrg(databaseUrl, "rebalance", "business")
      const users = await usersWithKeys(a, org, 16, "rebalance.test")

      // Clients send throughout, to whichever nodes are up; a node about to stop gets no new
      // requests and finishes those it has (a load balancer draining it).
      const up = new Set<TestServer>([a])
      const inFlight = new Map<TestServer, number>()
      const accepted: Array<string> = []
      const refused: Array<unknown> = []
      let phase = "alone"
      const perPhase = new Map<string, number>()
      let stop = false
      const lane = async (n: number) => {
        for (let i = 0; !stop; i++) {
          const nodes = [...up]
          const node = nodes[i % nodes.length]!
          const user = users[(n + i) % users.length]!
          inFlight.set(node, (inFlight.get(node) ?? 0) + 1)
          const res = await call(node, "POST", "/engine/v1/signals", {
            key: user.key,
            body: { type: "post-tool", adapter: "claude-code", session_id: `lane-${n}`, metadata: { model: "gpt-4o", tokens_in: 10 } }
          }).finally(() => inFlight.set(node, inFlight.get(node)! - 1))
          if (res.status === 200 && res.body.ok === true) {
            accepted.push(res.body.signal_id)
            perPhase.set(phase, (perPhase.get(phase) ?? 0) + 1)
          } else refused.push(res.body)
          await new Promise((r) => setTimeout(r, 10)) // the load's pace
        }
      }
      const lanes = Array.from({ length: 4 }, (_, n) => lane(n))
      const sent = (p: string, n: number) => waitFor(async () => perPhase.get(p) ?? 0, (c) => c >= n, { what: `signals (${p})` })
      await sent("alone", 20)

      /** Starts node B and waits (at most the 10 s the issue allows) until each node owns half. */
      const startB = async () => {
        const started = Date.now()
        b = await startServer({ databaseUrl, env })
        up.add(b)
        const nodes = [a, b]
        const listening = Date.now() - started
        const share = await waitFor(() => Promise.all(nodes.map(owned)), shared(4, 8), {
          timeoutMs: Math.max(0, 10_000 - listening),
          what: "the partitions to be shared 4/4"
        })
        console.log(`rebalance (${phase}): B listening ${listening} ms after its start, shared ${Date.now() - started} ms after`)
        return share
      }

      phase = "join"
      const joined = await startB()
      expect(joined.map((o) => o?.length)).toEqual([4, 4])

      // B stops (drained first): A takes every partition back.
      phase = "stopped"
      const leaving = b!
      up.delete(leaving)
      await waitFor(async () => inFlight.get(leaving) ?? 0, (n) => n === 0, { what: "B's requests to end" })
      await leaving.stop()
      b = undefined
      await waitFor(() => owned(a), (o) => o?.length === 8, { what: "node A to own every partition again" })
      await sent("stopped", 20)

      phase = "restart"
      const rejoined = await startB()
      expect(rejoined.map((o) => o?.length)).toEqual([4, 4])

      phase = "settled"
      await sent("settled", 20)
      stop = true
      await Promise.all(lanes)

      // Every signal sent was accepted, through every phase.
      expect(refused).toEqual([])
      for (const p of ["alone", "join", "stopped", "restart", "settled"]) expect(perPhase.get(p) ?? 0, p).toBeGreaterThan(0)
      // Each one is found afterwards, once: nothing lost or folded twice as partitions moved.
      const events = await waitFor(
        async () => (await walk(a, org.api_key_live!, "/api/v1/events", { limit: "100" })).items,
        (items) => items.length >= accepted.length,
        { timeoutMs: 60_000, what: "every accepted signal to be an event" }
      )
      const signalIds = events.map((e: { signal_id: string }) => e.signal_id)
      expect(signalIds.length).toBe(accepted.length)
      expect(new Set(signalIds)).toEqual(new Set(accepted))
    } finally {
      await b?.stop()
      await a.stop()
    }
  })
})
