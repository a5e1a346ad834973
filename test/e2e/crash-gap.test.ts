import pg from "pg"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { startReceiver } from "../support/receiver.ts"
import { exited, spawnServer } from "../support/served.ts"
import { waitFor } from "../support/wait.ts"

/**
 * Verdicts are answered once a signal is durable in the log and folded in memory; its projections
 * (events, sessions, actor snapshots, the partition offset, webhook outbox rows) are committed
 * behind it. This suite kills a node with SIGKILL while that gap is held open and checks that the
 * next node, folding the log again from the stored offset, makes the same verdicts and delivers
 * the same webhooks once.
 */

/** A direct connection to the node's database: what the API would show, without waiting on the node. */
const connect = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  return client
}

/** Backends waiting on a lock on partition_offsets: the commits our lock holds back. */
const waitingSql = `SELECT pid FROM pg_locks WHERE NOT granted AND relation = 'partition_offsets'::regclass`

/**
 * A SIGKILL does not end a commit already sent: PostgreSQL notices a dead client only when it next
 * reads or writes its socket, so a commit waiting on the lock goes in once the lock is released
 * (its data sent ahead with it). Both ways are run: that commit ended with the node (the next owner
 * folds everything again), and that commit left to finish (the next owner folds the rest).
 */
const orphans = [["ended with the node", true], ["left to finish", false]] as const

describe.each(logVariants())("kill -9 between verdict and commit over %s", (name, logEnv) => {
  const title = "(the commit in flight %s) the next owner folds the answered signals again: same verdicts, events and webhooks once"
  it.each(orphans)(title, { timeout: 180_000 }, async (orphan, endOrphan) => {
    const receiver = await startReceiver(() => ({ status: 200 }))
    const databaseUrl = await freshDatabase()
    const env = {
      ...logEnv(),
      DATABASE_URL: databaseUrl,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      DEMO_BOOTSTRAP: "false",
      WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      WEBHOOK_RETRY_SCALE: "0.001",
      WEBHOOK_TIMEOUT: "1 second",
      WEBHOOK_POLL_INTERVAL: "20 millis"
    }
    let node = await spawnServer(env)
    const db = await connect(databaseUrl)
    const holder = await connect(databaseUrl)
    const started = Date.now()
    try {
      const org = await bootstrapOrg(databaseUrl, "crash-gap", "team")
      const admin = { key: org.api_key_live! }
      const hook = await call(node, "POST", "/api/v1/webhooks", {
        ...admin,
        body: { url: receiver.url, events: ["session.started", "budget.warning", "budget.exceeded"], secret: "crash-gap-secret-0123456789abcdef" }
      })
      expect(hook.status, JSON.stringify(hook.body)).toBe(201)
      // A per-user budget: judged by the user's actor from its running total, which only a fold
      // of every earlier signal knows (not at acceptance).
      const budget = await call(node, "POST", "/api/v1/rules", {
        ...admin,
        body: {
          scope: "user",
          scope_id: org.user_id,
          name: "Daily tokens",
          type: "budget",
          action: "block",
          action_config: { message: "daily tokens spent" },
          condition: { window: "daily", metric: "tokens_total", threshold: 100 }
        }
      })
      expect(budget.status, JSON.stringify(budget.body)).toBe(201)

      // A session is one user's activity with one adapter: each session here has its own adapter.
      const send = (to: { readonly baseUrl: string }, adapter: string, key: string, tokens: number) =>
        call(to, "POST", "/engine/v1/signals", {
          key: org.license_key,
          headers: { "idempotency-key": key },
          body: { type: "post-tool", adapter, session_id: `${adapter}-1`, metadata: { model: "gpt-4o", tokens_in: tokens } }
        })
      const label = (e: { type: string; data: any }) => e.type === "session.started" ? `${e.type}:${e.data.adapter}` : e.type
      const eventsOf = async (signalIds: ReadonlyArray<string>) =>
        (await db.query<{ signal_id: string }>("SELECT signal_id FROM events WHERE signal_id = ANY($1)", [signalIds])).rows.map((r) => r.signal_id)

      // One signal committed before the gap: the stored offset the next owner starts from is not 0.
      const warm = await send(node, "warm", "warm-1", 10)
      expect(warm.body).toMatchObject({ ok: true })
      await waitFor(() => eventsOf([warm.body.signal_id]), (ids) => ids.length === 1, { what: "the first signal to be committed" })

      // Hold the gap open: the write-behind's commit upserts partition_offsets, which this lock
      // blocks (reads go on), so verdicts are answered while nothing is committed behind them.
      await holder.query("BEGIN")
      await holder.query("LOCK TABLE partition_offsets IN EXCLUSIVE MODE")

      // Sent one at a time, so the budget sees them in order: 10 + 40 + 40 = 90 (a warning at 80),
      // then 130 crosses it and what comes after is blocked. Two sessions: two session.started.
      const gap: Array<{ readonly adapter: string; readonly key: string; readonly tokens: number; readonly answer: any }> = []
      const sends = [["gap-a", "a-1"], ["gap-b", "b-1"], ["gap-a", "a-2"], ["gap-b", "b-2"], ["gap-a", "a-3"]] as const
      for (const [adapter, key] of sends) {
        const tokens = 40
        const answer = await send(node, adapter, key, tokens)
        expect(answer.status).toBe(200)
        gap.push({ adapter, key, tokens, answer: answer.body })
      }
      // Real verdicts (not pending), from the fold: until the budget is spent they pass, then it blocks.
      expect(gap.map((g) => g.answer.action ?? "ok")).toEqual(["ok", "ok", "ok", "block", "block"])
      for (const g of gap.slice(3)) expect(g.answer).toMatchObject({ ok: false, rule_id: budget.body.id, message: "daily tokens spent" })
      const signalIds = gap.map((g) => g.answer.signal_id as string)

      // The gap is open: the node's commit is waiting on our lock (not merely slow), so none of
      // what was answered is in PostgreSQL, and nothing was delivered.
      await waitFor(async () => (await db.query(waitingSql)).rowCount, (n) => (n ?? 0) >= 1, { what: "the node's commit to wait on the lock" })
      expect(await eventsOf(signalIds)).toEqual([])
      // The webhook's outbox: one delivery row per event it is owed.
      const owed = () =>
        db.query("SELECT event_id FROM webhook_deliveries WHERE webhook_id = $1", [hook.body.id]).then((r) => r.rows.map((x) => x.event_id as string))
      expect(await owed()).toHaveLength(1) // the first session's session.started only
      expect(receiver.events().map(label).filter((l) => l !== "session.started:warm")).toEqual([])

      node.child.kill("SIGKILL")
      await exited(node.child)
      // The killed node's commit is still waiting on the lock in its PostgreSQL backend.
      const waiting = (await db.query(waitingSql)).rows.map((r) => r.pid as number)
      expect(waiting.length).toBeGreaterThanOrEqual(1)
      if (endOrphan) { for (const pid of waiting) await db.query("SELECT pg_terminate_backend($1)", [pid]) }
      await holder.query("ROLLBACK")
      // Its backend exits once it has finished (or been ended): then what it wrote is visible.
      await waitFor(() => db.query("SELECT pid FROM pg_stat_activity WHERE pid = ANY($1)", [waiting]), (r) => r.rowCount === 0, {
        what: "the killed node's commit to end"
      })
      // Ended: nothing of the gap is stored. Left: its first commit (a prefix of the gap) went in.
      const stored = await eventsOf(signalIds)
      if (endOrphan) expect(stored).toEqual([])
      else {
        expect(stored.length).toBeGreaterThan(0)
        expect(signalIds.slice(0, stored.length).toSorted()).toEqual(stored.toSorted())
      }

      const killedAt = Date.now()
      node = await spawnServer({ ...env, PORT: String(await freePort()) })
      const readyAt = Date.now()

      // 1. Every signal answered before the kill is an event exactly once.
      const events = await waitFor(() => eventsOf(signalIds), (ids) => signalIds.every((id) => ids.includes(id)), {
        timeoutMs: 60_000,
        what: "the answered signals to be folded again"
      })
      const foldedAt = Date.now()
      expect(events.toSorted()).toEqual(signalIds.toSorted())

      // 2. A retry with the same key is answered what the first copy was: the re-fold decided it
      // the same way (ok stays ok, the budget's block stays the block of the same rule).
      for (const g of gap) {
        const retry = await send(node, g.adapter, g.key, g.tokens)
        expect(retry.body, g.key).toEqual({ ...g.answer, duplicate: true })
      }
      // Retries are not counted: still one event each.
      expect((await eventsOf(signalIds)).toSorted()).toEqual(signalIds.toSorted())
      // The re-fold rebuilt the user's total: a new signal is still over the budget.
      const next = await send(node, "gap-a", "a-4", 40)
      expect(next.body).toMatchObject({ ok: false, action: "block", rule_id: budget.body.id })

      // 4. The projections are the next owner's: its API shows the sessions with their counts.
      const sessions = await call(node, "GET", "/api/v1/sessions?limit=100", admin)
      expect(sessions.status).toBe(200)
      const counts = Object.fromEntries(sessions.body.data.map((s: any) => [s.adapter, s.signal_count]))
      expect(counts).toEqual({ warm: 1, "gap-a": 4, "gap-b": 2 })
      for (const id of signalIds) {
        const event = await call(node, "GET", `/api/v1/events/${id}`, admin)
        expect(event.status, id).toBe(200)
      }

      // 3. Webhooks: what the gap caused was enqueued by the re-fold and is delivered, each event
      // id once (the receiver answers 200, so no delivery is retried).
      const expected = ["session.started:warm", "session.started:gap-a", "session.started:gap-b", "budget.warning", "budget.exceeded"]
      await waitFor(async () => receiver.events().map(label), (got) => expected.every((x) => got.includes(x)), {
        timeoutMs: 30_000,
        what: "the webhooks caused before the kill"
      })
      await new Promise((r) => setTimeout(r, 1_000)) // a duplicate would come within a few polls
      const after = await owed()
      const received = receiver.events()
      const perId = new Map<string, number>()
      for (const e of received) perId.set(e.id, (perId.get(e.id) ?? 0) + 1)
      expect([...perId.values()].filter((n) => n > 1), JSON.stringify(received.map((e) => [e.id, label(e)]))).toEqual([])
      expect([...perId.keys()].toSorted()).toEqual(after.toSorted())
      expect(received.map(label).toSorted()).toEqual(expected.toSorted())
      console.log(
        `${name}, commit in flight ${orphan}: ${stored.length} of ${signalIds.length} stored by it; ` +
          `gap answered in ${killedAt - started} ms; next node ready ${readyAt - killedAt} ms after the kill, ` +
          `re-folded ${foldedAt - readyAt} ms later; total ${Date.now() - started} ms`
      )
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined)
      await Promise.all([holder.end().catch(() => undefined), db.end().catch(() => undefined)])
      node.child.kill("SIGTERM")
      await exited(node.child)
      await receiver.close()
    }
  })
})
