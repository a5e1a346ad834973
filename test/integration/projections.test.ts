import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import type { EventRow } from "../../src/domain/projection-rows.ts"
import { noRecipients } from "../../src/domain/recipients.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import { startEmbeddedPostgres } from "../../src/store/embedded-postgres.ts"
import type { BatchWrite } from "../../src/store/batch-write.ts"
import { Projections } from "../../src/store/projections.ts"
import { freshDatabase, withStore } from "../support/harness.ts"
import { freePort } from "../support/ports.ts"

/** Runs `body` with the projections store on a new, migrated database (of the tests' cluster, or at `url`). */
const onFreshStore = async <A, E>(body: Effect.Effect<A, E, Projections | SqlClient.SqlClient>, at?: string): Promise<A> => {
  const url = at ?? await freshDatabase()
  await withStore(url, Effect.void)
  return Effect.runPromise(body.pipe(Effect.provide(Projections.layer), Effect.provide(databaseFromUrl(url))))
}

const event = (n: number, partition: number): EventRow => ({
  id: `evt_${n}`,
  signal_id: `sig_${n}`,
  org_id: "org_1",
  environment: "live",
  session_id: "sess_1",
  user_id: "user_1",
  project_id: null,
  ts: "2026-11-22T10:00:00.000Z",
  type: "post-tool",
  adapter: "a",
  model: null,
  tokens_in: n,
  tokens_out: 0,
  latency_ms: null,
  cost_usd: 0,
  cost_estimated: false,
  model_known: false,
  error_code: null,
  metadata: {},
  log_partition: partition,
  log_offset: n
})

const batch = (fromOffset: number, nextOffset: number, n: number, partition = 0): BatchWrite => ({
  log: "signals",
  partition,
  fromOffset,
  nextOffset,
  sessions: [],
  events: [event(n, partition)],
  notices: [],
  recipients: noRecipients,
  actors: [],
  goals: [],
  scopeUsage: [{
    org_id: "org_1",
    environment: "live",
    scope: "org",
    scope_id: "org_1",
    window_key: "d:2026-11-22",
    partition,
    cost_usd: n / 10,
    tokens_in: n,
    tokens_out: 0
  }],
  watch: [{ org_id: "org_1", environment: "live", scope: "org", scope_id: "org_1", window_key: "d:2026-11-22" }]
})

describe("Projections.commitBatch against PostgreSQL", () => {
  it("commits a batch in one statement, fenced on the partition's offset: a stale writer writes nothing", async () => {
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      const first = yield* projections.commitBatch(batch(0, 5, 1))
      // A second owner that believes the partition is still at 0: fenced.
      const stale = yield* projections.commitBatch(batch(0, 7, 2))
      const next = yield* projections.commitBatch(batch(5, 9, 3))
      // Another partition's counts come back to a writer that watches the window.
      const other = yield* projections.commitBatch(batch(0, 1, 4, 1))
      const events = yield* sql<{ readonly id: string }>`SELECT id FROM events ORDER BY id`
      const usage = yield* sql<{ readonly partition: number; readonly tokens_in: string }>`
        SELECT partition, tokens_in::text FROM scope_usage ORDER BY partition`
      return { first, stale, next, other, events, usage, offset: yield* projections.nextOffset("signals", 0) }
    }))
    expect(result.first).toEqual({ _tag: "Committed", others: [] })
    expect(result.stale).toEqual({ _tag: "Fenced" })
    expect(result.next._tag).toBe("Committed")
    expect(result.other).toEqual({
      _tag: "Committed",
      others: [{
        org_id: "org_1",
        environment: "live",
        scope: "org",
        scope_id: "org_1",
        window_key: "d:2026-11-22",
        partition: 0,
        cost_usd: 0.3,
        tokens_in: 3,
        tokens_out: 0
      }]
    })
    expect(result.events.map((e) => e.id)).toEqual(["evt_1", "evt_3", "evt_4"])
    expect(result.usage).toEqual([{ partition: 0, tokens_in: "3" }, { partition: 1, tokens_in: "4" }])
    expect(result.offset).toBe(9)
  })

  it("batches of several partitions committed together are fenced each on its own", async () => {
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      yield* projections.commitBatch(batch(0, 5, 1, 0))
      // Concurrent commits of partitions 0 (stale: it is at 5, not 0), 1 and 2 (fresh).
      const outcomes = yield* Effect.all([
        projections.commitBatch(batch(0, 6, 2, 0)),
        projections.commitBatch(batch(0, 3, 3, 1)),
        projections.commitBatch(batch(0, 4, 4, 2))
      ], { concurrency: "unbounded" })
      const events = yield* sql<{ readonly id: string }>`SELECT id FROM events ORDER BY id`
      const offsets = yield* sql<{ readonly partition: number; readonly next_offset: string }>`
        SELECT partition, next_offset::text FROM partition_offsets ORDER BY partition`
      return { outcomes: outcomes.map((o) => o._tag), events: events.map((e) => e.id), offsets }
    }))
    expect(result.outcomes).toEqual(["Fenced", "Committed", "Committed"])
    expect(result.events).toEqual(["evt_1", "evt_3", "evt_4"])
    expect(result.offsets).toEqual([
      { partition: 0, next_offset: "5" },
      { partition: 1, next_offset: "3" },
      { partition: 2, next_offset: "4" }
    ])
  })

  it("a batch the database refuses fails alone; the batches committed with it still commit", async () => {
    const poisoned: BatchWrite = { ...batch(0, 1, 5, 1), events: [{ ...event(5, 1), ts: "not a time" }] }
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      const exits = yield* Effect.all([
        Effect.exit(projections.commitBatch(batch(0, 2, 6, 0))),
        Effect.exit(projections.commitBatch(poisoned)),
        Effect.exit(projections.commitBatch(batch(0, 3, 7, 2)))
      ], { concurrency: "unbounded" })
      const events = yield* sql<{ readonly id: string }>`SELECT id FROM events ORDER BY id`
      return { exits: exits.map((e) => (e._tag === "Success" ? e.value._tag : "Failed")), events: events.map((e) => e.id) }
    }))
    expect(result.exits).toEqual(["Committed", "Failed", "Committed"])
    expect(result.events).toEqual(["evt_6", "evt_7"])
  })

  it("an event written again is still one row; events carry the primary key and one index per read path", async () => {
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      yield* projections.commitBatch(batch(0, 1, 1))
      // The same event in a later batch (as a record appended twice would give): no second row.
      const again = yield* projections.commitBatch({ ...batch(1, 2, 2), events: [event(1, 0), event(2, 0)] })
      const events = yield* sql<{ readonly id: string; readonly signal_id: string }>`SELECT id, signal_id FROM events ORDER BY id`
      const indexes = yield* sql<{ readonly indexname: string }>`
        SELECT indexname FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname`
      return { again: again._tag, events, indexes: indexes.map((i) => i.indexname) }
    }))
    expect(result.again).toBe("Committed")
    expect(result.events).toEqual([{ id: "evt_1", signal_id: "sig_1" }, { id: "evt_2", signal_id: "sig_2" }])
    // The signal id's uniqueness follows from the primary key (an event id is evt_ + the signal id's suffix).
    expect(result.indexes).toEqual(["events_by_session", "events_by_ts", "events_by_user", "events_pkey"])
  })
})

describe("updates in place", () => {
  it("sessions and actor states rewritten by every commit are updated in their pages: the tables stay near their size", { timeout: 120_000 }, async () => {
    const users = Array.from({ length: 400 }, (_, i) => `user_${String(i).padStart(26, "0")}`)
    const commit = (n: number): BatchWrite => ({
      log: "signals",
      partition: 0,
      fromOffset: n,
      nextOffset: n + 1,
      events: [],
      notices: [],
      recipients: noRecipients,
      goals: [],
      watch: [],
      sessions: users.map((user_id, i) => ({
        id: `sess_${String(i).padStart(26, "0")}`,
        org_id: "org_1",
        environment: "live",
        user_id,
        adapter: "claude-code",
        client_session_id: `cs-${i}`,
        project_id: null,
        started_at: "2026-11-22T10:00:00.000Z",
        last_activity_at: new Date(Date.parse("2026-11-22T10:00:00.000Z") + n * 1000).toISOString(),
        ended_at: null,
        end_reason: null,
        primary_model: "claude-sonnet-4",
        models: ["claude-sonnet-4"],
        tokens_in: n * 1000,
        tokens_out: n * 100,
        cost_usd: n * 0.0045,
        signal_count: n + 1,
        error_count: 0
      })),
      actors: users.map((user_id) => ({
        user_id,
        partition: 0,
        state: { open: {}, usage: { "live:d:2026-11-22": { cost_usd: n * 0.0045, tokens_in: n * 1000, tokens_out: n * 100 } } }
      })),
      scopeUsage: [{
        org_id: "org_1",
        environment: "live",
        scope: "org",
        scope_id: "org_1",
        window_key: "d:2026-11-22",
        partition: 0,
        cost_usd: n * 0.0045,
        tokens_in: n * 1000,
        tokens_out: n * 100
      }]
    })
    const tables = ["sessions", "actor_state"]
    // On a cluster of its own: a page's old row versions are removed only once no transaction of
    // the cluster may still see them, and PostgreSQL may go by a cluster-wide bound for that, so
    // the other tests' work on the shared cluster would make the growth partly theirs.
    const dir = mkdtempSync(join(tmpdir(), "signal-engine-hot-"))
    const cluster = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), ephemeral: true })
    const result = await onFreshStore(
      Effect.gen(function*() {
        const projections = yield* Projections
        const sql = yield* SqlClient.SqlClient
        const sizes = () =>
          sql<{ readonly name: string; readonly bytes: string }>`
          SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes FROM pg_class c WHERE c.relname IN ${sql.in(tables)}
          ORDER BY c.relname`
        yield* projections.commitBatch(commit(0))
        const before = yield* sizes()
        for (let n = 1; n <= 100; n++) yield* projections.commitBatch(commit(n))
        const after = yield* sizes()
        const sessions = yield* sql<{ readonly signal_count: number }>`SELECT signal_count FROM sessions`
        return { before, after, sessions }
      }),
      cluster.url
    ).finally(async () => {
      await cluster.stop()
      rmSync(cluster.dataDir, { recursive: true, force: true })
      rmSync(dir, { recursive: true, force: true })
    })
    expect(result.sessions.map((s) => s.signal_count)).toEqual(users.map(() => 101))
    // 100 commits, each updating the same 400 sessions and 400 actor states. With room in their
    // pages the tables (with their indexes) grew 1.4 and 1.8 times here; without it, every update
    // that finds its page full writes the new version elsewhere and adds an entry to each index:
    // 8 and 13 times.
    for (const table of ["actor_state", "sessions"]) {
      const before = Number(result.before.find((r) => r.name === table)!.bytes)
      const after = Number(result.after.find((r) => r.name === table)!.bytes)
      expect(after, table).toBeLessThan(3 * before)
    }
  })
})

describe("the projections' write connection", () => {
  it("events keep every character and number through the bulk write", async () => {
    const awkward: EventRow = {
      ...event(1, 0),
      project_id: "tab\there, back\\slash, new\nline, return\rcarriage, \\N, \\.",
      model: "modèle-€-🚀",
      tokens_in: 2 ** 40,
      latency_ms: 12.5,
      cost_usd: 0.000123,
      cost_estimated: true,
      error_code: "E\t1",
      metadata: { text: "line1\nline2\t\"quoted\" back\\slash", nested: { list: [1, "x\\y", null, true] }, unicode: "ü 🚀 \u2028" }
    }
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      yield* projections.commitBatch({ ...batch(0, 2, 2), events: [awkward, event(2, 0)] })
      return yield* sql<Record<string, unknown>>`
        SELECT id, project_id, model, tokens_in::text, latency_ms, cost_usd, cost_estimated, model_known, error_code,
          metadata::text AS metadata, ts FROM events ORDER BY id`
    }))
    expect(result.map((r) => r.id)).toEqual(["evt_1", "evt_2"])
    expect(result[0]).toMatchObject({
      project_id: awkward.project_id,
      model: awkward.model,
      tokens_in: String(2 ** 40),
      latency_ms: 12.5,
      cost_usd: 0.000123,
      cost_estimated: true,
      model_known: false,
      error_code: "E\t1"
    })
    expect(JSON.parse(result[0]!.metadata as string)).toEqual(awkward.metadata)
    expect(new Date(result[0]!.ts as string).toISOString()).toBe(awkward.ts)
    expect(result[1]).toMatchObject({ project_id: null, latency_ms: null, error_code: null })
  })

  it("rows written by the statement keep every character: quotes, backslashes, dollar signs", async () => {
    const awkward = "it's a 'quote', ''two'', back\\slash \\' \\N $$ $tag$ E'x' \n\t ü 🚀 --; DROP TABLE events"
    const session = {
      id: "sess_1",
      org_id: "org_1",
      environment: "live" as const,
      user_id: "user_1",
      adapter: "a",
      client_session_id: awkward,
      project_id: `${awkward} (project)`,
      started_at: "2026-11-22T10:00:00.000Z",
      last_activity_at: "2026-11-22T10:00:00.000Z",
      ended_at: null,
      end_reason: null,
      primary_model: awkward,
      models: [awkward, "m"],
      tokens_in: 1,
      tokens_out: 2,
      cost_usd: 0.5,
      signal_count: 1,
      error_count: 0
    }
    const scope = { org_id: "org_1", environment: "live" as const, scope: "project" as const, scope_id: awkward, window_key: "d:2026-11-22" }
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      // Another partition's count of the scope, for the second commit to read back.
      yield* projections.commitBatch({ ...batch(0, 1, 1, 1), scopeUsage: [{ ...scope, partition: 1, cost_usd: 3, tokens_in: 4, tokens_out: 5 }], watch: [] })
      const outcome = yield* projections.commitBatch({ ...batch(0, 1, 2, 0), sessions: [session], watch: [scope] })
      const sessions = yield* sql<Record<string, unknown>>`
        SELECT client_session_id, project_id, primary_model, models FROM sessions`
      return { outcome, sessions }
    }))
    expect(result.sessions).toEqual([{ client_session_id: awkward, project_id: session.project_id, primary_model: awkward, models: [awkward, "m"] }])
    expect(result.outcome).toEqual({ _tag: "Committed", others: [{ ...scope, partition: 1, cost_usd: 3, tokens_in: 4, tokens_out: 5 }] })
  })

  it("a write connection the database drops is replaced: the next commits go through", async () => {
    const result = await onFreshStore(Effect.gen(function*() {
      const projections = yield* Projections
      const sql = yield* SqlClient.SqlClient
      yield* projections.commitBatch(batch(0, 1, 1))
      const killed = yield* sql<{ readonly killed: boolean }>`
        SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity
        WHERE application_name = 'signal-engine-writer' AND datname = current_database()`
      // The worker retries a failed commit; here, a few tries at most.
      const commit = (b: BatchWrite) =>
        Effect.exit(projections.commitBatch(b)).pipe(
          Effect.flatMap((exit) => (exit._tag === "Success" ? Effect.succeed(exit.value) : Effect.fail(exit.cause))),
          Effect.retry({ times: 3 })
        )
      const second = yield* commit(batch(1, 2, 2))
      const third = yield* commit(batch(2, 3, 3))
      const events = yield* sql<{ readonly id: string }>`SELECT id FROM events ORDER BY id`
      return { killed: killed.map((k) => k.killed), second: second._tag, third: third._tag, events: events.map((e) => e.id) }
    }))
    expect(result.killed).toEqual([true])
    expect(result.second).toBe("Committed")
    expect(result.third).toBe("Committed")
    expect(result.events).toEqual(["evt_1", "evt_2", "evt_3"])
  })
})
