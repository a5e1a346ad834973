import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Exit, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { makeBatcher } from "../lib/batcher.ts"
import type { ScopeUsageRow } from "../domain/scope-usage.ts"
import type { UserState } from "../domain/user-state.ts"
import type { KnownEvent } from "../domain/verdict.ts"
import { type ActorSnapshot, type BatchWrite, type CommitOutcome, makeBatchWrite } from "./batch-write.ts"
import { makePgWriter } from "./pg-writer.ts"

class StoreClosed extends Schema.TaggedError<StoreClosed>()("StoreClosed", { message: Schema.String }) {}

/**
 * The write side of the projections. A batch's rows, its actors' new state and the
 * partition's next offset commit in one transaction, so a crash either keeps all of a batch
 * or none of it, and the worker resumes exactly after the last committed batch. Rows travel
 * as one JSON parameter per table (json_to_recordset), all in one statement, and events by `COPY`
 * after it, on a connection of their own (`pg-writer.ts`); reads go through the SQL pool.
 */
export class Projections extends Context.Service<Projections, {
  readonly nextOffset: (log: string, partition: number) => Effect.Effect<number>
  /** The stored events of these ids (those that exist). */
  readonly findEvents: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<KnownEvent>>
  readonly loadActors: (userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, UserState>>
  readonly actorsWithOpenSessions: (partition: number) => Effect.Effect<ReadonlyArray<ActorSnapshot>>
  /** A partition's counts of the shared scopes in recent windows. */
  readonly loadScopeUsage: (partition: number) => Effect.Effect<ReadonlyArray<ScopeUsageRow>>
  /**
   * Commits a batch, or answers "fenced" and writes nothing when the partition's stored offset
   * is not `fromOffset`: another owner moved it on (a rebalance, a lost lease), and this
   * worker's view is stale.
   */
  readonly commitBatch: (batch: BatchWrite) => Effect.Effect<CommitOutcome>
  /**
   * Forget a partition's projections (all of them, or only what happened at or after `since`),
   * its actor states and its offset, so a replay can rebuild them (replay only).
   */
  readonly resetPartition: (log: string, partition: number, since?: Date) => Effect.Effect<void>
  /**
   * Forget every partition's projections at once, for a full rebuild (replay only): the tables
   * are emptied, not deleted from row by row, so the rebuild writes into a table without dead
   * rows to skip and vacuum.
   */
  readonly resetAll: (log: string) => Effect.Effect<void>
  /**
   * Gives a rebuilt partition's events back the verdicts its reset kept (replay only): a retry of
   * a keyed signal is answered what its first copy got, after a replay too.
   */
  readonly restoreVerdicts: (partition: number) => Effect.Effect<void>
}>()("signal-engine/store/Projections") {
  static readonly layer = Layer.effect(
    Projections,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const writer = yield* makePgWriter((yield* PgClient.PgClient).config)

      const nextOffset = Effect.fn("Projections.nextOffset")(function*(log: string, partition: number) {
        const rows = yield* sql<{ readonly next_offset: string | number }>`
          SELECT next_offset FROM partition_offsets WHERE log = ${log} AND partition = ${partition}`.pipe(Effect.orDie)
        return rows[0] ? Number(rows[0].next_offset) : 0
      })

      const loadActors = Effect.fn("Projections.loadActors")(function*(userIds: ReadonlyArray<string>) {
        if (userIds.length === 0) return new Map<string, UserState>()
        const rows = yield* sql<{ readonly user_id: string; readonly state: UserState }>`
          SELECT user_id, state FROM actor_state WHERE user_id IN ${sql.in(userIds)}`.pipe(Effect.orDie)
        return new Map(rows.map((r) => [r.user_id, r.state]))
      })

      const findEvents = Effect.fn("Projections.findEvents")(function*(ids: ReadonlyArray<string>) {
        if (ids.length === 0) return []
        const rows = yield* sql<Omit<KnownEvent, "log_offset"> & { readonly log_offset: string | number }>`
          SELECT id, session_id, log_partition, log_offset, verdict FROM events WHERE id IN ${sql.in(ids)}`.pipe(Effect.orDie)
        return rows.map((r) => ({ ...r, log_offset: Number(r.log_offset) }))
      })

      const actorsWithOpenSessions = Effect.fn("Projections.actorsWithOpenSessions")(function*(partition: number) {
        const rows = yield* sql<{ readonly user_id: string; readonly state: UserState }>`
          SELECT user_id, state FROM actor_state WHERE partition = ${partition} AND has_open_sessions`.pipe(Effect.orDie)
        return rows.map((r) => ({ user_id: r.user_id, partition, state: r.state }))
      })

      const loadScopeUsage = Effect.fn("Projections.loadScopeUsage")(function*(partition: number) {
        const rows = yield* sql<ScopeUsageRow>`
          SELECT org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out
          FROM scope_usage WHERE partition = ${partition} AND updated_at > now() - interval '35 days'`.pipe(Effect.orDie)
        return rows.map((r) => ({ ...r, tokens_in: Number(r.tokens_in), tokens_out: Number(r.tokens_out) }))
      })

      const writeFenced = makeBatchWrite(writer)

      /**
       * The batches of one write, by log, in one statement each. When a statement of several
       * batches fails, each of them is tried alone, so a batch the database refuses fails only
       * its own partition (whose worker retries it) and not the others that came with it.
       */
      const write = Effect.fnUntraced(function*(batches: ReadonlyArray<BatchWrite>) {
        const outcomes = new Map<BatchWrite, Exit.Exit<CommitOutcome>>()
        for (const log of new Set(batches.map((b) => b.log))) {
          const group = batches.filter((b) => b.log === log)
          const together = yield* Effect.exit(Effect.orDie(writeFenced(log, group)))
          if (Exit.isSuccess(together)) {
            group.forEach((b, i) => outcomes.set(b, Exit.succeed(together.value[i]!)))
          } else if (group.length === 1) {
            outcomes.set(group[0]!, together as Exit.Exit<never>)
          } else {
            for (const b of group) {
              outcomes.set(b, yield* Effect.exit(Effect.orDie(Effect.map(writeFenced(log, [b]), (r) => r[0]!))))
            }
          }
        }
        return batches.map((b) => outcomes.get(b)!)
      })

      // Partition workers commit concurrently; the batches that arrive while a write is in flight
      // go together in the next one.
      const coalesced = yield* makeBatcher<BatchWrite, Exit.Exit<CommitOutcome>, StoreClosed>({
        maxItems: 64,
        window: Duration.zero,
        write,
        closed: () => new StoreClosed({ message: "the projections store is shutting down" })
      })

      // A failed commit is a defect of that batch; its worker retries it.
      const commitBatch = (batch: BatchWrite): Effect.Effect<CommitOutcome> => coalesced([batch]).pipe(Effect.orDie, Effect.flatMap((outcomes) => outcomes[0]!))

      /**
       * The stored verdicts of events about to be forgotten (keyed signals a rule decided): the log
       * does not hold them, so a replay would lose what a retry must be answered. Kept until the
       * partition is rebuilt; a replay run again after a failed one keeps the first copies.
       */
      const keepVerdicts = (of?: { readonly partition: number; readonly since: Date | undefined }) =>
        sql`INSERT INTO kept_verdicts (event_id, log_partition, verdict)
          SELECT id, log_partition, verdict FROM events WHERE verdict IS NOT NULL
            ${of === undefined ? sql`` : sql`AND log_partition = ${of.partition}`}
            ${of?.since === undefined ? sql`` : sql`AND ts >= ${of.since}`}
          ON CONFLICT (event_id) DO NOTHING`

      const restoreVerdicts = Effect.fn("Projections.restoreVerdicts")(function*(partition: number) {
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`UPDATE events e SET verdict = k.verdict FROM kept_verdicts k
            WHERE k.log_partition = ${partition} AND e.id = k.event_id`
          yield* sql`DELETE FROM kept_verdicts WHERE log_partition = ${partition}`
        }))
      }, Effect.orDie)

      const resetPartition = Effect.fn("Projections.resetPartition")(function*(log: string, partition: number, since?: Date) {
        yield* sql.withTransaction(Effect.gen(function*() {
          const eventsSince = since === undefined ? sql`` : sql`AND ts >= ${since}`
          const sessionsSince = since === undefined ? sql`` : sql`AND last_activity_at >= ${since}`
          yield* keepVerdicts({ partition, since })
          yield* sql`DELETE FROM events WHERE log_partition = ${partition} ${eventsSince}`
          yield* sql`DELETE FROM sessions WHERE user_id IN (SELECT user_id FROM actor_state WHERE partition = ${partition}) ${sessionsSince}`
          yield* sql`DELETE FROM actor_state WHERE partition = ${partition}`
          // Counts are absolute and the replay folds from the start, so all of the partition's are rewritten.
          yield* sql`DELETE FROM scope_usage WHERE partition = ${partition}`
          const goalsSince = since === undefined ? sql`` : sql`AND coalesce(updated_at, created_at) >= ${since}`
          yield* sql`DELETE FROM goals WHERE log_partition = ${partition} ${goalsSince}`
          yield* sql`DELETE FROM partition_offsets WHERE log = ${log} AND partition = ${partition}`
        }))
      }, Effect.orDie)

      const resetAll = Effect.fn("Projections.resetAll")(function*(log: string) {
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* keepVerdicts()
          yield* sql`TRUNCATE events, sessions, actor_state, scope_usage, goals`
          yield* sql`DELETE FROM partition_offsets WHERE log = ${log}`
        }))
      }, Effect.orDie)

      return Projections.of({
        nextOffset,
        findEvents,
        loadActors,
        actorsWithOpenSessions,
        loadScopeUsage,
        commitBatch,
        resetPartition,
        resetAll,
        restoreVerdicts
      })
    })
  )
}
