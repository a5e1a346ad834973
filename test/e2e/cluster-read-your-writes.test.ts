import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, type JsonResponse, startServer, type TestServer, withStore } from "../support/harness.ts"
import { owners, sharedOwners, usersWithKeys } from "../support/cluster.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

const trials = 10

interface Delay {
  /** From `since` to the first answer that shows the change (an upper bound of the delay, ms). */
  readonly ms: number
  /** Whether the first probe already showed it. */
  readonly first: boolean
}

/** Sends `probe` back to back until `done` holds for every answer: how soon the node applied the change. */
const delayUntil = async (
  since: number,
  probe: () => Promise<ReadonlyArray<JsonResponse>>,
  done: (answer: JsonResponse) => boolean,
  what: string
): Promise<Delay> => {
  const deadline = since + 10_000
  for (let probes = 1;; probes++) {
    const answers = await probe()
    if (answers.every(done)) return { ms: Date.now() - since, first: probes === 1 }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last answers: ${JSON.stringify(answers.map((a) => a.body))}`)
  }
}

const summary = (delays: ReadonlyArray<Delay>) => {
  const sorted = delays.map((d) => d.ms).sort((a, b) => a - b)
  return {
    trials: sorted.length,
    shown_by_first_probe: delays.filter((d) => d.first).length,
    median_ms: sorted[Math.floor(sorted.length / 2)],
    max_ms: sorted[sorted.length - 1]
  }
}

/**
 * Read-your-writes across two nodes: a change made through node A is in force for the next
 * signal A accepts wherever it is judged (the owner of its partition may be B, which reloads
 * when the signal carries a newer rules version than it holds), and on node B as soon as B hears
 * the change announced; how soon is measured and printed.
 */
describe.each(logVariants())("changes made through one node, over %s", (name, logEnv) => {
  it("are in force for A's next signal on every partition, and on B once announced", { timeout: 240_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const env = { ...logEnv(), CLUSTER_SECRET: "s3cret-shared-by-all-nodes-of-the-cluster", INGEST_WAIT: "5 seconds", AUTH_CACHE_TTL: "1 hour" }
    const a = await startServer({ databaseUrl, env })
    await waitFor(() => owners(databaseUrl), (rows) => rows.length === 4, { what: "node A to own the partitions" })
    const b = await startServer({ databaseUrl, env })
    try {
      // Both logs split the partitions between A and B.
      await sharedOwners(databaseUrl, 4)
      const org = await bootstrapOrg(databaseUrl, "cluster-ryw", "team")
      const admin = org.api_key_live!
      // Eight users: over four partitions, both nodes own some of them.
      const users = await usersWithKeys(a, org, 8, "ryw.test")
      const signal = (node: TestServer, key: string, model = "gpt-4o", tokens = 10) =>
        call(node, "POST", "/engine/v1/signals", {
          key,
          body: { type: "post-tool", adapter: "claude-code", session_id: "ryw", metadata: { model, tokens_in: tokens, tokens_out: 0 } }
        })
      // The probe: every user through a node. A rule is judged by the owner of the user's partition
      // (A or B), so one user's answer through B shows only its owner's rules.
      const everyone = (node: TestServer, model?: string, tokens?: number) => () => Promise.all(users.map((u) => signal(node, u.key, model, tokens)))
      const rule = async (body: Record<string, unknown>) => {
        const res = await call(a, "POST", "/api/v1/rules", { key: admin, body: { scope: "org", scope_id: org.org_id, ...body } })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        return res.body.id as string
      }
      for (const answer of await everyone(a)()) expect(answer.body).toMatchObject({ ok: true })

      const created: Array<Delay> = []
      const disabled: Array<Delay> = []
      const limited: Array<Delay> = []
      for (let trial = 0; trial < trials; trial++) {
        // A per-user limit (judged by the owner of each user's partition, A or B) created on A
        // below what every user spent: A's next signal of every user is blocked.
        const limit = await rule({
          name: `limit ${trial}`,
          type: "user_limit",
          action: "block",
          action_config: { message: "limit" },
          condition: { window: "daily", metric: "tokens_total", per_user: 1 }
        })
        for (const answer of await everyone(a)()) expect(answer.body, `trial ${trial}: A after the limit`).toMatchObject({ ok: false, rule_id: limit })
        expect((await call(a, "DELETE", `/api/v1/rules/${limit}`, { key: admin })).status).toBe(204)
        for (const answer of await everyone(a)()) expect(answer.body, `trial ${trial}: A after the delete`).toMatchObject({ ok: true })

        // The same through B: as soon as B hears of it.
        const limitB = await rule({
          name: `limit B ${trial}`,
          type: "user_limit",
          action: "block",
          action_config: { message: "limit" },
          condition: { window: "daily", metric: "tokens_total", per_user: 1 }
        })
        const limitedB = (r: JsonResponse) => r.body.ok === false && r.body.rule_id === limitB
        limited.push(await delayUntil(Date.now(), everyone(b), limitedB, "B to apply the limit"))
        expect((await call(a, "DELETE", `/api/v1/rules/${limitB}`, { key: admin })).status).toBe(204)
        for (const answer of await everyone(a)()) expect(answer.body).toMatchObject({ ok: true })

        // A model block created on A, then disabled on A: B's answers follow.
        const block = await rule({
          name: `no o3 ${trial}`,
          type: "model_filter",
          action: "block",
          action_config: { message: "no o3" },
          condition: { model: { in: ["o3"] } }
        })
        const blocked = (r: JsonResponse) => r.body.ok === false && r.body.rule_id === block
        created.push(await delayUntil(Date.now(), everyone(b, "o3"), blocked, "B to apply the block"))
        for (const answer of await everyone(b, "o3")()) expect(blocked(answer), JSON.stringify(answer.body)).toBe(true)
        const off = await call(a, "PUT", `/api/v1/rules/${block}`, { key: admin, body: { enabled: false } })
        expect(off.status, JSON.stringify(off.body)).toBe(200)
        disabled.push(await delayUntil(Date.now(), everyone(b, "o3"), (r) => r.body.ok === true, "B to lift the block"))
        for (const answer of await everyone(b, "o3")()) expect(answer.body).toMatchObject({ ok: true })
        expect((await call(a, "DELETE", `/api/v1/rules/${block}`, { key: admin })).status).toBe(204)
      }

      // The notices cut (every node's listener of rule changes is ended by the server, and comes
      // back a second later): B, owning some users' partitions, hears of a rule created through A
      // only from A's signals (their rules version), and still judges A's next signals by it.
      for (let trial = 0; trial < 5; trial++) {
        await withStore(
          databaseUrl,
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()
              AND query ILIKE '%LISTEN%signal_engine_rules%'`).pipe(Effect.orDie)
        )
        const limit = await rule({
          name: `unheard limit ${trial}`,
          type: "user_limit",
          action: "block",
          action_config: { message: "limit" },
          condition: { window: "daily", metric: "tokens_total", per_user: 1 }
        })
        for (const answer of await everyone(a)()) expect(answer.body, `trial ${trial}: unheard limit`).toMatchObject({ ok: false, rule_id: limit })
        expect((await call(a, "DELETE", `/api/v1/rules/${limit}`, { key: admin })).status).toBe(204)
        for (const answer of await everyone(a)()) expect(answer.body, `trial ${trial}: unheard delete`).toMatchObject({ ok: true })
      }

      // The org's time zone changed on A (the org's settings travel with each key's lookup, which
      // both nodes cache): A's next signal of every user counts in the new zone's day, B's as soon
      // as B hears. A per-user limit every user has spent today (UTC) tells the days apart.
      const zoneLimit = await rule({
        name: "zone limit",
        type: "user_limit",
        action: "block",
        action_config: { message: "limit" },
        condition: { window: "daily", metric: "tokens_total", per_user: 5 }
      })
      const spentToday = (r: JsonResponse) => r.body.ok === false && r.body.rule_id === zoneLimit
      for (const answer of await everyone(a, "gpt-4o", 0)()) expect(spentToday(answer), JSON.stringify(answer.body)).toBe(true)
      await delayUntil(Date.now(), everyone(b, "gpt-4o", 0), spentToday, "B to apply the limit")
      // A zone whose date differs from UTC's right now: UTC+14 from 10:00 UTC on, UTC-12 before noon.
      const zone = new Date().getUTCHours() >= 10 ? "Pacific/Kiritimati" : "Etc/GMT+12"
      const setZone = async (time_zone: string) => expect((await call(a, "PATCH", "/api/v1/org", { key: admin, body: { time_zone } })).status).toBe(200)
      const zoned: Array<Delay> = []
      for (let trial = 0; trial < trials; trial++) {
        await setZone(zone)
        for (const answer of await everyone(a, "gpt-4o", 0)()) expect(answer.body, `trial ${trial}: A in the new zone`).toMatchObject({ ok: true })
        zoned.push(await delayUntil(Date.now(), everyone(b, "gpt-4o", 0), (r) => r.body.ok === true, "B to count in the new zone"))
        for (const answer of await everyone(b, "gpt-4o", 0)()) expect(answer.body).toMatchObject({ ok: true })
        await setZone("UTC")
        for (const answer of await everyone(a, "gpt-4o", 0)()) expect(spentToday(answer), `trial ${trial}: A back in UTC`).toBe(true)
        zoned.push(await delayUntil(Date.now(), everyone(b, "gpt-4o", 0), spentToday, "B to count in UTC again"))
      }
      expect((await call(a, "DELETE", `/api/v1/rules/${zoneLimit}`, { key: admin })).status).toBe(204)

      // Keys revoked on A: refused by B (which had them cached) as soon as it hears.
      const revoked: Array<Delay> = []
      for (const u of users) {
        expect((await signal(b, u.key)).status).toBe(200)
        expect((await call(a, "DELETE", `/api/v1/license-keys/${u.keyId}`, { key: admin })).status).toBe(204)
        expect((await signal(a, u.key)).status, "A refuses the key it revoked at once").toBe(401)
        revoked.push(await delayUntil(Date.now(), async () => [await signal(b, u.key)], (r) => r.status === 401, "B to refuse the key"))
      }

      console.log(
        `read-your-writes across nodes over ${name}: the delay from A's answer to B's first answer showing the change`,
        JSON.stringify({
          rule_created: summary(created),
          rule_disabled: summary(disabled),
          user_limit_created: summary(limited),
          org_time_zone_changed: summary(zoned),
          license_key_revoked: summary(revoked)
        })
      )
    } finally {
      await b.stop()
      await a.stop()
    }
  })
})
