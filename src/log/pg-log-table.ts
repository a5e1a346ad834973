import type { PgClient } from "@effect/sql-pg"
import { Effect, Option } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import { decodeStored, type UndecodableRecord } from "./log-records.ts"
import { type LogEntry, LogUnavailable } from "./signal-log.ts"

// What PgLog's writer, reader and consumer share of the tables of migration 0002: `signal_log`
// holds the records, `signal_log_heads` the next offset of each partition.

/**
 * NOTIFY channel; a payload is `<partition>:<head>`, a partition an append committed to and its
 * next offset after it (before 2026-11-26 it was the partitions alone, comma-separated).
 */
export const CHANNEL = "signal_log"
export const READ_BATCH = 500

interface Row {
  readonly offset: bigint | number | string
  readonly key: string
  readonly record: unknown
}

/**
 * Errors the server reports for a statement it then did not commit (each append is one statement
 * in its own transaction); a lost connection or an unclassified error leaves the outcome unknown.
 */
const refusedStatement = new Set([
  "ConstraintError",
  "UniqueViolation",
  "DeadlockError",
  "SerializationError",
  "LockTimeoutError",
  "StatementTimeoutError",
  "SqlSyntaxError",
  "AuthorizationError",
  "AuthenticationError"
])

/**
 * A connection that never opened (refused, the server starting or shutting down) sent nothing:
 * the pool's connect failure, or the server's 57P01-03 at start-up, before any statement.
 */
const neverConnected = (error: SqlError) => (error.reason as { readonly operation?: unknown }).operation === "connect"

export const unavailable = (what: string) => (error: SqlError) =>
  new LogUnavailable({
    message: `PgLog: ${what} failed: ${error.message}`,
    ...(refusedStatement.has(error.reason._tag) || neverConnected(error) ? { notWritten: true } : {})
  })

/** Up to `limit` rows of a partition from offset `from` (and below `until`), in offset order. */
export const readRows = (sql: PgClient.PgClient, partition: number, from: number, until: number | undefined, limit: number) =>
  until === undefined
    ? sql<Row>`
        SELECT "offset", key, record FROM signal_log
        WHERE partition = ${partition} AND "offset" >= ${from}
        ORDER BY "offset" LIMIT ${limit}`
    : sql<Row>`
        SELECT "offset", key, record FROM signal_log
        WHERE partition = ${partition} AND "offset" >= ${from} AND "offset" < ${until}
        ORDER BY "offset" LIMIT ${limit}`

/** The decodable prefix of the rows, and the failure that ended it, if any. */
export const decodeRows = (partition: number, rows: ReadonlyArray<Row>, at?: number) =>
  Effect.sync(() => {
    const entries: Array<LogEntry> = []
    for (const row of rows) {
      const offset = Number(row.offset)
      const decoded = decodeStored(partition, offset, row.record)
      if (decoded._tag === "Failure") return { entries, failure: Option.some(decoded.failure) }
      entries.push(
        at === undefined ? { partition, offset, key: row.key, record: decoded.success } : { partition, offset, key: row.key, record: decoded.success, at }
      )
    }
    return { entries, failure: Option.none<UndecodableRecord>() }
  })
