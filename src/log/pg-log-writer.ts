import type { PgClient } from "@effect/sql-pg"
import { Config, Duration, Effect } from "effect"
import type { LogRecord } from "../domain/records.ts"
import { batchedAppend } from "./batched-append.ts"
import type { LocalRecords } from "./local-records.ts"
import { serializeRecord } from "./log-records.ts"
import { partitionForKey } from "./murmur2.ts"
import { CHANNEL, unavailable } from "./pg-log-table.ts"
import type { AppendResult } from "./signal-log.ts"

/** PgLog's `append`; what it appends is handed to this node's own consumers through `local`. */
export const makePgAppend = (sql: PgClient.PgClient, partitions: number, local: LocalRecords) =>
  Effect.gen(function*() {
    // One statement (so one transaction, and one round trip) for every queued record. The head
    // rows are locked in ascending partition order (no deadlock between nodes) and stay locked
    // until commit, so the offsets of a partition commit in offset order and are gapless: a
    // reader that sees offset n has seen every offset below it, and never skips a record that was
    // still uncommitted. Keep it so. After waiting for a lock, FOR UPDATE answers the head as the
    // previous writer committed it, so the offsets continue from there.
    const write = (records: ReadonlyArray<LogRecord>) =>
      Effect.gen(function*() {
        const placed = records.map((r) => partitionForKey(r.user_id, partitions))
        const values = records.map(serializeRecord)
        const counts = new Map<number, number>()
        // Each record's position among the batch's records of its partition (0-based).
        const index = placed.map((p) => {
          const n = counts.get(p) ?? 0
          counts.set(p, n + 1)
          return n
        })
        const touched = [...counts.keys()].sort((a, b) => a - b)
        const heads = yield* sql<{ readonly partition: number; readonly base: bigint }>`
          WITH locked AS (
            SELECT partition, next_offset FROM signal_log_heads
            WHERE partition = ANY(${touched}::int4[]) ORDER BY partition FOR UPDATE
          ), appended AS (
            INSERT INTO signal_log (partition, "offset", key, record)
            SELECT t.partition, l.next_offset + t.idx, t.key, t.record::jsonb
            FROM unnest(
              ${placed}::int4[], ${index}::int8[],
              ${records.map((r) => r.user_id)}::text[], ${values}::text[]
            ) AS t(partition, idx, key, record)
            JOIN locked l ON l.partition = t.partition
          ), advanced AS (
            UPDATE signal_log_heads AS h SET next_offset = l.next_offset + c.n
            FROM locked l
            JOIN unnest(${touched}::int4[], ${touched.map((p) => counts.get(p)!)}::int8[]) AS c(partition, n)
              ON c.partition = l.partition
            WHERE h.partition = l.partition
          )
          -- Delivered to listeners when (and only if) the statement commits: each partition with
          -- its new head, so a consumer already there (this node's own) need not look.
          SELECT l.partition, l.next_offset AS base,
            pg_notify(${CHANNEL}, l.partition || ':' || (l.next_offset + c.n))
          FROM locked l
          JOIN unnest(${touched}::int4[], ${touched.map((p) => counts.get(p)!)}::int8[]) AS c(partition, n)
            ON c.partition = l.partition
          ORDER BY l.partition`
        const base = new Map(heads.map((h) => [h.partition, Number(h.base)]))
        if (base.size !== touched.length) {
          return yield* Effect.die(new Error(`PgLog: signal_log_heads lacks partitions of ${touched.join(",")}`))
        }
        const results = placed.map((partition, i): AppendResult => ({ partition, offset: base.get(partition)! + index[i]! }))
        local.appended(records, values, results)
        return results
      }).pipe(Effect.mapError(unavailable("append")))

    // Appended at once, what arrives meanwhile gathering for the next statement: a lone signal's
    // verdict p50 measured 8-9 ms with a 2 ms window and 3-5 ms without, for 7-13% less
    // throughput at saturation (docs/benchmarks.md); a window trades the one for the other.
    const window = yield* Config.Duration("PGLOG_APPEND_WINDOW").pipe(Config.withDefault(Duration.zero), Effect.orDie)
    return yield* batchedAppend("PgLog", window, write)
  })
