import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect, it } from "vitest"
import { notice, toOutboxEvent } from "../../src/domain/notices.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import type { BatchWrite } from "../../src/store/batch-write.ts"
import { Projections } from "../../src/store/projections.ts"
import { freshDatabase, withStore } from "../support/harness.ts"

const batch = (fromOffset: number, firings: ReadonlyArray<number>, ts: string): BatchWrite => ({
  log: "signals", partition: 0, fromOffset, nextOffset: fromOffset + firings.length, sessions: [], events: [], actors: [], goals: [],
  scopeUsage: [], watch: [],
  notices: firings.map((n) =>
    toOutboxEvent(notice("rule.triggered", `rule_hot:sig_${n}`, { org_id: "org_1", environment: "live", ts }, {
      rule_id: "rule_hot", action: "notify", user_id: "user_1", signal_id: `sig_${n}`, rule_name: "Hot"
    })))
})

it("firings folded after their window's summary was due are counted in a late summary, once", async () => {
  const url = await freshDatabase()
  await withStore(url, Effect.void)
  const rows = await Effect.runPromise(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const projections = yield* Projections
    yield* sql`INSERT INTO orgs (id, name, plan) VALUES ('org_1', 'o', 'team')`
    yield* sql`INSERT INTO channels (id, org_id, environment, name, kind, coalesce_s) VALUES ('ch_1', 'org_1', 'live', 'c', 'discord', 60)`
    yield* sql`INSERT INTO rules (id, org_id, environment, name, type, scope, scope_id, priority, condition, action, action_config)
      VALUES ('rule_hot', 'org_1', 'live', 'Hot', 'model_filter', 'org', 'org_1', 1, '{"model":{"in":["hot"]}}', 'notify',
        '{"channels":["ch_1"]}')`
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
  }).pipe(Effect.provide(Projections.layer), Effect.provide(databaseFromUrl(url))))
  // The first firing, its window's summary of the next two, and a late summary of the two folded after.
  expect(rows).toEqual([{ summary: false, firings: 1 }, { summary: true, firings: 2 }, { summary: true, firings: 2 }])
})
