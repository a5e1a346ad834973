import { Effect } from "effect"
import type { EventRow, GoalRow, SessionRow } from "../domain/projection-rows.ts"
import { type ScopeUsageRow, scopeUsageChannel } from "../domain/scope-usage.ts"
import type { UserState } from "../domain/user-state.ts"
import type { OutboxEvent } from "../domain/notices.ts"
import type { Recipients } from "../domain/recipients.ts"
import { outboxCtes } from "./outbox-enqueue.ts"
import { copyRows, type PgWriter, type WriteFailed } from "./pg-writer.ts"

export interface ActorSnapshot {
  readonly user_id: string
  readonly partition: number
  readonly state: UserState
}

export interface BatchWrite {
  readonly log: string
  readonly partition: number
  /** The offset this worker believes the partition is at; the write is fenced on it. */
  readonly fromOffset: number
  /** The offset after the last record of the batch: where this partition resumes. */
  readonly nextOffset: number
  readonly sessions: ReadonlyArray<SessionRow>
  readonly events: ReadonlyArray<EventRow>
  /** Webhook events this batch caused (the outbox), written in the same transaction. */
  readonly notices: ReadonlyArray<OutboxEvent>
  /** Who they go to (src/domain/recipients.ts): the new ones get a delivery or a message each. */
  readonly recipients: Recipients
  readonly actors: ReadonlyArray<ActorSnapshot>
  readonly goals: ReadonlyArray<GoalRow>
  /** This partition's counts of the shared scopes the batch touched (absolute values). */
  readonly scopeUsage: ReadonlyArray<ScopeUsageRow>
  /** Shared scope windows whose other partitions' counts the caller wants back (watched by budgets). */
  readonly watch: ReadonlyArray<Omit<ScopeUsageRow, "partition" | "cost_usd" | "tokens_in" | "tokens_out">>
  /** NOTIFY payloads announcing the watched counts the batch wrote, sent if (and when) it commits. */
  readonly announce?: ReadonlyArray<string> | undefined
}

export type CommitOutcome =
  | { readonly _tag: "Committed"; readonly others: ReadonlyArray<ScopeUsageRow> }
  | { readonly _tag: "Fenced" }

const hasOpenSessions = (state: UserState) => Object.keys(state.open).length > 0

const eventColumns = [
  "id",
  "signal_id",
  "org_id",
  "environment",
  "session_id",
  "user_id",
  "project_id",
  "ts",
  "type",
  "adapter",
  "model",
  "tokens_in",
  "tokens_out",
  "latency_ms",
  "cost_usd",
  "cost_estimated",
  "model_known",
  "error_code",
  "metadata",
  "log_partition",
  "log_offset",
  "verdict"
] as const satisfies ReadonlyArray<keyof EventRow>

/**
 * The write of a batch of projections (the rows of each partition's folded batch, its actors'
 * states and its next offset), fenced on each partition's stored offset.
 */
export const makeBatchWrite = (writer: PgWriter) => {
  /**
   * One statement for the batches of every partition that reach it together: the offset
   * fences and every table's rows as data-modifying CTEs, each row written only if the fence
   * of its partition held, so each batch commits whole or not at all, instead of one
   * statement per table and per partition. Concurrent writers of a partition serialise on
   * its offset row; the loser's fence re-checks the updated row, fails, and its rows are not
   * written. All the batches of one write belong to one log (the caller groups them).
   *
   * Events, the bulk of every batch, go by `COPY` (a third of the database's work per row
   * of an `INSERT` from JSON). `COPY` cannot skip a row that exists: an event written before
   * (a record appended twice) fails it, and the write is made again with the events inserted
   * by the statement, `ON CONFLICT DO NOTHING`.
   *
   * Written three ways, each the fallback of the one before:
   * - "atomic": the statement and the `COPY` of every event in one query string, one round
   *   trip (the database runs it as one transaction). When a fence did not hold the
   *   statement raises (`signal_engine_fence_lost`, SQLSTATE SEF01) and nothing is written.
   * - "copy": BEGIN, the statement, the `COPY` of the events of the partitions whose fence
   *   held, COMMIT: four round trips, and a fenced partition does not fail the others.
   * - "insert": the events inside the statement.
   */
  const writeBatches = (
    log: string,
    batches: ReadonlyArray<BatchWrite>,
    mode: "atomic" | "copy" | "insert"
  ): Effect.Effect<ReadonlyArray<CommitOutcome>, WriteFailed> => {
    // Values travel as parameters, or (atomic: a query string cannot have parameters) as literals
    // the writer puts in their places as it sends the query.
    const params: Array<string> = []
    const value = (text: string) => {
      params.push(text)
      return `$${params.length}`
    }
    const json = (rows: unknown) => `${value(JSON.stringify(rows))}::json`
    const fences = batches.map((b) => ({ partition: b.partition, from_offset: b.fromOffset, next_offset: b.nextOffset }))
    const held = (column: string) => `${column} IN (SELECT partition FROM fence)`
    const ctes = [
      `fences AS (
        SELECT * FROM json_to_recordset(${json(fences)})
          AS f(partition integer, from_offset bigint, next_offset bigint))`,
      `fence AS (
        INSERT INTO partition_offsets AS o (log, partition, next_offset, updated_at)
        SELECT ${value(log)}, partition, next_offset, now() FROM fences
        ON CONFLICT (log, partition) DO UPDATE SET next_offset = excluded.next_offset, updated_at = now()
        WHERE o.next_offset = (SELECT f.from_offset FROM fences f WHERE f.partition = o.partition)
        RETURNING o.partition)`
    ]
    const sessions = batches.flatMap((b) => b.sessions.map((row) => ({ ...row, partition: b.partition })))
    if (sessions.length > 0) {
      ctes.push(`sessions_written AS (
        INSERT INTO sessions (id, org_id, environment, user_id, adapter, client_session_id, project_id,
          started_at, last_activity_at, ended_at, end_reason, primary_model, models, tokens_in, tokens_out,
          cost_usd, signal_count, error_count)
        SELECT id, org_id, environment, user_id, adapter, client_session_id, project_id,
          started_at, last_activity_at, ended_at, end_reason, primary_model, models, tokens_in, tokens_out,
          cost_usd, signal_count, error_count
        FROM json_to_recordset(${json(sessions)}) AS r(
          id text, org_id text, environment text, user_id text, adapter text, client_session_id text,
          project_id text, started_at timestamptz, last_activity_at timestamptz, ended_at timestamptz,
          end_reason text, primary_model text, models jsonb, tokens_in bigint, tokens_out bigint,
          cost_usd double precision, signal_count integer, error_count integer, partition integer)
        WHERE ${held("r.partition")}
        ON CONFLICT (id) DO UPDATE SET
          project_id = excluded.project_id, last_activity_at = excluded.last_activity_at,
          ended_at = excluded.ended_at, end_reason = excluded.end_reason,
          primary_model = excluded.primary_model, models = excluded.models,
          tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out, cost_usd = excluded.cost_usd,
          signal_count = excluded.signal_count, error_count = excluded.error_count)`)
    }
    const events = batches.flatMap((b) => b.events)
    if (events.length > 0 && mode === "insert") {
      // Events are immutable: one written before stays as it is.
      ctes.push(`events_written AS (
        INSERT INTO events (${eventColumns.join(", ")})
        SELECT ${eventColumns.join(", ")}
        FROM json_to_recordset(${json(events)}) AS r(
          id text, signal_id text, org_id text, environment text, session_id text, user_id text,
          project_id text, ts timestamptz, type text, adapter text, model text, tokens_in bigint,
          tokens_out bigint, latency_ms double precision, cost_usd double precision, cost_estimated boolean,
          model_known boolean, error_code text, metadata jsonb, log_partition integer, log_offset bigint,
          verdict jsonb)
        WHERE ${held("r.log_partition")}
        ON CONFLICT (id) DO NOTHING)`)
    }
    ctes.push(...outboxCtes(batches, json, held))
    const actors = batches.flatMap((b) => b.actors.map((a) => ({ ...a, has_open_sessions: hasOpenSessions(a.state) })))
    if (actors.length > 0) {
      ctes.push(`actors_written AS (
        INSERT INTO actor_state (user_id, partition, has_open_sessions, state, updated_at)
        SELECT user_id, partition, has_open_sessions, state, now()
        FROM json_to_recordset(${json(actors)}) AS r(
          user_id text, partition integer, has_open_sessions boolean, state jsonb)
        WHERE ${held("r.partition")}
        ON CONFLICT (user_id) DO UPDATE SET partition = excluded.partition,
          has_open_sessions = excluded.has_open_sessions, state = excluded.state, updated_at = now())`)
    }
    const goals = batches.flatMap((b) => b.goals)
    if (goals.length > 0) {
      ctes.push(`goals_written AS (
        INSERT INTO goals (id, org_id, environment, user_id, description, status, adapter, created_at, updated_at, log_partition)
        SELECT id, org_id, environment, user_id, description, status, adapter, created_at, updated_at, log_partition
        FROM json_to_recordset(${json(goals)}) AS r(
          id text, org_id text, environment text, user_id text, description text, status text, adapter text,
          created_at timestamptz, updated_at timestamptz, log_partition integer)
        WHERE ${held("r.log_partition")}
        ON CONFLICT (id) DO UPDATE SET description = excluded.description, status = excluded.status,
          updated_at = excluded.updated_at)`)
    }
    const scopeUsage = batches.flatMap((b) => b.scopeUsage)
    if (scopeUsage.length > 0) {
      // Each partition's own counts (absolute values).
      ctes.push(`usage_written AS (
        INSERT INTO scope_usage (org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out, updated_at)
        SELECT org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out, now()
        FROM json_to_recordset(${json(scopeUsage)}) AS r(
          org_id text, environment text, scope text, scope_id text, window_key text, partition integer,
          cost_usd double precision, tokens_in bigint, tokens_out bigint)
        WHERE ${held("r.partition")}
        ON CONFLICT (org_id, environment, scope, scope_id, window_key, partition) DO UPDATE SET
          cost_usd = excluded.cost_usd, tokens_in = excluded.tokens_in, tokens_out = excluded.tokens_out,
          updated_at = now())`)
    }
    // Every partition's counts of the windows budgets watch, read in the same statement (as
    // of before it); each batch takes the other partitions' rows.
    const watch = batches.flatMap((b) => b.watch)
    const others = watch.length === 0 ? `'[]'::json` : `(
      SELECT coalesce(json_agg(json_build_object('org_id', u.org_id, 'environment', u.environment, 'scope', u.scope,
        'scope_id', u.scope_id, 'window_key', u.window_key, 'partition', u.partition, 'cost_usd', u.cost_usd,
        'tokens_in', u.tokens_in, 'tokens_out', u.tokens_out)), '[]'::json)
      FROM scope_usage u
      JOIN (SELECT DISTINCT * FROM json_to_recordset(${json(watch)})
        AS w(org_id text, environment text, scope text, scope_id text, window_key text)) w
        ON u.org_id = w.org_id AND u.environment = w.environment AND u.scope = w.scope
          AND u.scope_id = w.scope_id AND u.window_key = w.window_key)`
    const announcements = batches.flatMap((b) => (b.announce ?? []).map((payload) => ({ partition: b.partition, payload })))
    // Delivered to listeners when (and only if) the transaction commits, for held partitions only.
    const announced = announcements.length === 0 ? "" : `, (
      SELECT count(pg_notify('${scopeUsageChannel}', a.payload))
      FROM json_to_recordset(${json(announcements)}) AS a(partition integer, payload text)
      WHERE ${held("a.partition")}) AS announced`
    const statement = `WITH ${ctes.join(",\n")}
      SELECT coalesce((SELECT json_agg(partition) FROM fence), '[]'::json) AS committed, ${others} AS others${announced}`
    const parse = <A>(value: A | string): A => (typeof value === "string" ? JSON.parse(value) as A : value)
    const readOthers = (others: ReadonlyArray<ScopeUsageRow> | string) =>
      parse(others).map((r) => ({ ...r, tokens_in: Number(r.tokens_in), tokens_out: Number(r.tokens_out) }))

    if (mode === "atomic") {
      const wanted = new Set(batches.map((b) => b.partition)).size
      const text = `${statement},
        CASE WHEN (SELECT count(*) FROM fence) <> ${wanted}
          THEN signal_engine_fence_lost((SELECT count(*) FROM fence), ${wanted}) END AS lost;
        COPY events (${eventColumns.join(", ")}) FROM STDIN`
      return writer.atomic(text, params, copyRows(events, eventColumns)).pipe(
        Effect.map((rows) => {
          const read = readOthers(rows[0]![1] ?? "[]")
          return batches.map((b): CommitOutcome => ({ _tag: "Committed", others: read.filter((r) => r.partition !== b.partition) }))
        })
      )
    }
    return writer.transaction(async (tx) => {
      const rows = await tx.query<{ readonly committed: ReadonlyArray<number> | string; readonly others: ReadonlyArray<ScopeUsageRow> | string }>(
        statement,
        params
      )
      const row = rows[0]!
      const committed = new Set(parse(row.committed))
      if (mode === "copy") {
        const fenced = events.filter((e) => committed.has(e.log_partition))
        if (fenced.length > 0) await tx.copyFrom(`events (${eventColumns.join(", ")})`, copyRows(fenced, eventColumns))
      }
      const read = readOthers(row.others)
      return batches.map((b): CommitOutcome =>
        committed.has(b.partition)
          ? { _tag: "Committed", others: read.filter((r) => r.partition !== b.partition) }
          : { _tag: "Fenced" }
      )
    })
  }

  /**
   * A write of batches: in one round trip when every fence holds and no event exists yet;
   * otherwise again by the way that tells fenced partitions apart, or inserts past events
   * that exist.
   */
  return (log: string, batches: ReadonlyArray<BatchWrite>): Effect.Effect<ReadonlyArray<CommitOutcome>, WriteFailed> =>
    writeBatches(log, batches, "atomic").pipe(
      Effect.catchIf((e) => e.code === "SEF01", () => writeBatches(log, batches, "copy")),
      // An event that exists already (23505, unique_violation) is only possible on the COPY.
      Effect.catchIf((e) => e.code === "23505", () => writeBatches(log, batches, "insert"))
    )
}
