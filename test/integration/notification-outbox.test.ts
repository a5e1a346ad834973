import { PgClient } from "@effect/sql-pg"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect, it } from "vitest"
import { notice, type OutboxEvent, toOutboxEvent } from "../../src/domain/notices.ts"
import { recipientsOf, type TargetDirectory } from "../../src/domain/recipients.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import { type BatchWrite, makeBatchWrite } from "../../src/store/batch-write.ts"
import { makePgWriter } from "../../src/store/pg-writer.ts"
import { Projections } from "../../src/store/projections.ts"
import { freshDatabase, withStore } from "../support/harness.ts"

/** The notify rule `rule_hot` names channel ch_1; webhook wh_1 gets every notification. */
const directory: TargetDirectory = {
  targetsOf: () => ({ webhooks: [{ id: "wh_1", events: ["session.started"] }], channels: new Set(["ch_1"]), alertChannels: [] }),
  rulesFor: () => [{ id: "rule_hot", action_config: { channels: ["ch_1"] } }]
}

const firing = (n: number, ts: string): OutboxEvent =>
  toOutboxEvent(notice("rule.triggered", `rule_hot:sig_${n}`, { org_id: "org_1", environment: "live", ts }, {
    rule_id: "rule_hot",
    action: "notify",
    user_id: "user_1",
    signal_id: `sig_${n}`,
    rule_name: "Hot"
  }))

const batch = (fromOffset: number, firings: ReadonlyArray<number>, ts: string, partition = 0, to = directory): BatchWrite => {
  const notices = firings.map((n) => firing(n, ts))
  return {
    log: "signals",
    partition,
    fromOffset,
    nextOffset: fromOffset + firings.length,
    sessions: [],
    events: [],
    actors: [],
    goals: [],
    scopeUsage: [],
    watch: [],
    notices,
    recipients: recipientsOf(notices, to)
  }
}

/** A store with org_1, its channel ch_1 (60 s windows) and webhook wh_1, then `effect`. */
const onStore = async <A>(effect: Effect.Effect<A, unknown, Projections | SqlClient.SqlClient | PgClient.PgClient>) => {
  const url = await freshDatabase()
  await withStore(url, Effect.void)
  return Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO orgs (id, name, plan) VALUES ('org_1', 'o', 'team')`
      yield* sql`INSERT INTO channels (id, org_id, environment, name, kind, coalesce_s) VALUES ('ch_1', 'org_1', 'live', 'c', 'discord', 60)`
      yield* sql`INSERT INTO webhooks (id, org_id, environment, url, events, secret_ciphertext)
      VALUES ('wh_1', 'org_1', 'live', 'https://example.com/', '{session.started}', 'sealed')`
      return yield* effect
    }).pipe(Effect.provide(Projections.layer), Effect.provide(databaseFromUrl(url)))
  )
}

const outbox = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const deliveries = yield* sql<{ readonly webhook_id: string; readonly event_id: string }>`
    SELECT webhook_id, event_id FROM webhook_deliveries ORDER BY event_id`
  const messages = yield* sql<{ readonly channel_id: string; readonly summary: boolean; readonly firings: number }>`
    SELECT channel_id, summary, firings FROM notifications ORDER BY summary, firings`
  return { deliveries, messages }
})

it("firings folded after their window's summary was due are counted in a late summary, once", async () => {
  const rows = await onStore(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const projections = yield* Projections
    // A window that closed an hour ago: its summary is due at once.
    const ts = new Date(Date.now() - 3_600_000).toISOString()
    yield* projections.commitBatch(batch(0, [1, 2, 3], ts))
    // The dispatcher sends the summary (as it would, it being due).
    yield* sql`UPDATE notifications SET status = 'delivered', attempts = 1 WHERE summary`
    // A backlog folds more firings of that window; then the same batch again (a redelivery).
    yield* projections.commitBatch(batch(3, [4, 5], ts))
    yield* projections.commitBatch(batch(3, [4, 5], ts))
    return yield* sql<{ readonly summary: boolean; readonly firings: number }>`
      SELECT summary, firings FROM notifications ORDER BY summary, firings`
  }))
  // The first firing, its window's summary of the next two, and a late summary of the two folded after.
  expect(rows).toEqual([{ summary: false, firings: 1 }, { summary: true, firings: 2 }, { summary: true, firings: 2 }])
})

it("a target deleted or disabled since its tenant's targets were read gets nothing, and the batch commits", async () => {
  const stale: TargetDirectory = {
    targetsOf: () => ({
      webhooks: [{ id: "wh_1", events: [] }, { id: "wh_gone", events: [] }],
      channels: new Set(["ch_1", "ch_gone"]),
      alertChannels: []
    }),
    rulesFor: () => [{ id: "rule_hot", action_config: { channels: ["ch_1", "ch_gone"] } }]
  }
  const result = await onStore(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const projections = yield* Projections
    const ts = new Date().toISOString()
    const first = yield* projections.commitBatch(batch(0, [1], ts, 0, stale))
    yield* sql`UPDATE channels SET enabled = false WHERE id = 'ch_1'`
    const second = yield* projections.commitBatch(batch(1, [2], ts, 0, stale))
    return { outcomes: [first._tag, second._tag], ...(yield* outbox) }
  }))
  expect(result.outcomes).toEqual(["Committed", "Committed"])
  expect(result.deliveries).toEqual([
    { webhook_id: "wh_1", event_id: firing(1, "").id },
    { webhook_id: "wh_1", event_id: firing(2, "").id }
  ].sort((a, b) => a.event_id.localeCompare(b.event_id)))
  // The first firing's message to ch_1; none to a channel deleted, nor to ch_1 once disabled.
  expect(result.messages).toEqual([{ channel_id: "ch_1", summary: false, firings: 1 }])
})

it("an event two partitions enqueue in one statement reaches each recipient once", async () => {
  const result = await onStore(
    Effect.gen(function*() {
      const writer = yield* makePgWriter((yield* PgClient.PgClient).config)
      const ts = new Date().toISOString()
      const outcomes = yield* makeBatchWrite(writer)("signals", [batch(0, [1], ts, 0), batch(0, [1], ts, 1)])
      return { outcomes: outcomes.map((o) => o._tag), ...(yield* outbox) }
    }).pipe(Effect.scoped)
  )
  expect(result.outcomes).toEqual(["Committed", "Committed"])
  expect(result.deliveries).toEqual([{ webhook_id: "wh_1", event_id: firing(1, "").id }])
  expect(result.messages).toEqual([{ channel_id: "ch_1", summary: false, firings: 1 }])
})
