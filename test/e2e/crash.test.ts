import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { exited, spawnServer } from "../support/served.ts"
import { waitFor } from "../support/wait.ts"

// Kafka with its appends in parallel (KAFKA_PRODUCERS: several idempotent producers, each with
// its own partitions) must keep the same guarantee as one producer.
const kafka = logVariants().find(([name]) => name === "KafkaLog")![1]
const variants = [...logVariants(), ["KafkaLog with 3 producers", () => ({ ...kafka(), KAFKA_PRODUCERS: "3" })] as const]

describe.each(variants)("crash safety over %s", (_name, logEnv) => {
  it("after a SIGKILL mid-stream and a restart, every signal answered ok is in the events exactly once", { timeout: 120_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const env = { ...logEnv(), DATABASE_URL: databaseUrl, PORT: String(await freePort()), HOST: "127.0.0.1", DEMO_BOOTSTRAP: "false" }
    const first = await spawnServer(env)
    const org = await bootstrapOrg(databaseUrl, "crash", "team")

    const acknowledged: Array<string> = []
    let stop = false
    const sender = async (lane: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await fetch(`${first.baseUrl}/engine/v1/signals`, {
            method: "POST",
            headers: { authorization: `Bearer ${org.license_key}`, "content-type": "application/json" },
            body: JSON.stringify({ type: "post-tool", adapter: `lane-${lane % 4}`, session_id: `s${lane}`, metadata: { lane, i } })
          })
          const body: any = await res.json()
          if (res.status === 200 && body.ok === true) acknowledged.push(body.signal_id)
        } catch {
          return // the server is gone
        }
      }
    }
    const lanes = Array.from({ length: 16 }, (_, lane) => sender(lane))
    await waitFor(async () => acknowledged.length, (n) => n >= 300, { timeoutMs: 60_000, what: "300 acknowledged signals" })
    first.child.kill("SIGKILL")
    stop = true
    await Promise.all(lanes)
    await exited(first.child)
    expect(acknowledged.length).toBeGreaterThanOrEqual(300)

    const second = await spawnServer({ ...env, PORT: String(await freePort()) })
    try {
      const query = () =>
        withStore(
          databaseUrl,
          Effect.gen(function*() {
            const sql = yield* SqlClient.SqlClient
            // One statement, so events and session counts come from the same snapshot while the
            // restarted node may still be projecting records that were never acknowledged.
            const rows = yield* sql<{ readonly events: ReadonlyArray<string> | null; readonly counted: number }>`
            SELECT (SELECT array_agg(signal_id) FROM events WHERE org_id = ${org.org_id}) AS events,
                   (SELECT coalesce(sum(signal_count), 0)::int FROM sessions WHERE org_id = ${org.org_id}) AS counted`
            return { events: [...(rows[0]?.events ?? [])], counted: rows[0]?.counted ?? 0 }
          })
        )
      const acked = new Set(acknowledged)
      const state = await waitFor(query, (s) => [...acked].every((id) => s.events.includes(id)), {
        timeoutMs: 60_000,
        what: "every acknowledged signal to be projected"
      })
      // Exactly once: no event twice, and the sessions count each event once.
      expect(new Set(state.events).size).toBe(state.events.length)
      expect(state.counted).toBe(state.events.length)
    } finally {
      second.child.kill("SIGTERM")
      await exited(second.child)
    }
  })
})
