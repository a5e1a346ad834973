import type { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import { decodeRows, READ_BATCH, readRows, unavailable } from "./pg-log-table.ts"
import { range } from "./partitions.ts"
import type { SignalLogService } from "./signal-log.ts"

/** PgLog's reads outside its consumers (replay, tests): each partition's bounds, and `readPartition`. */
export const makePgReader = (sql: PgClient.PgClient, partitions: number) => {
  const headOf = (partition: number) =>
    sql<{ readonly next_offset: bigint }>`SELECT next_offset FROM signal_log_heads WHERE partition = ${partition}`.pipe(
      Effect.map((rows) => Number(rows[0]?.next_offset ?? 0))
    )

  const readPartition: SignalLogService["readPartition"] = (partition, fromOffset, onBatch) =>
    Effect.gen(function*() {
      const end = yield* headOf(partition).pipe(Effect.mapError(unavailable("readPartition")))
      let next = Math.max(0, fromOffset)
      while (next < end) {
        const rows = yield* readRows(sql, partition, next, end, READ_BATCH).pipe(Effect.mapError(unavailable("readPartition")))
        if (rows.length === 0) break
        const { entries, failure } = yield* decodeRows(partition, rows)
        if (entries.length > 0) yield* onBatch(entries)
        if (Option.isSome(failure)) return yield* Effect.die(failure.value)
        next = entries[entries.length - 1]!.offset + 1
      }
    })

  const endOffsets = sql<{ readonly partition: number; readonly next_offset: bigint }>`
    SELECT partition, next_offset FROM signal_log_heads WHERE partition < ${partitions}`.pipe(
    Effect.map((rows) => {
      const ends = range(partitions).map(() => 0)
      for (const row of rows) ends[row.partition] = Number(row.next_offset)
      return ends
    }),
    Effect.mapError(unavailable("endOffsets"))
  )

  const startOffsets = sql<{ readonly partition: number; readonly first: bigint }>`
    SELECT h.partition, coalesce((SELECT min(l."offset") FROM signal_log l WHERE l.partition = h.partition), h.next_offset) AS first
    FROM signal_log_heads h WHERE h.partition < ${partitions}`.pipe(
    Effect.map((rows) => {
      const starts = range(partitions).map(() => 0)
      for (const row of rows) starts[row.partition] = Number(row.first)
      return starts
    }),
    Effect.mapError(unavailable("startOffsets"))
  )

  return { readPartition, startOffsets, endOffsets }
}
