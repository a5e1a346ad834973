import { PgClient } from "@effect/sql-pg"
import { Effect, Layer } from "effect"
import { makeLocalRecords } from "./local-records.ts"
import { LogMisconfigured } from "./log-errors.ts"
import { LogIdentityGuard } from "./log-identity.ts"
import { LogPartitions } from "./partitions.ts"
import { makePgConsumer } from "./pg-log-consumer.ts"
import { makePgReader } from "./pg-log-reader.ts"
import { makePgAppend } from "./pg-log-writer.ts"
import { Metrics } from "../observability/metrics.ts"
import { makeSignalLog, SignalLog } from "./signal-log.ts"

/**
 * The `signals` log as a PostgreSQL table (migration 0002): `signal_log` holds the records,
 * `signal_log_heads` the next offset of each partition. Ownership of partitions is a session
 * advisory lock per partition, held on a reserved connection, so a node that dies (or loses
 * that connection) releases its partitions and the others pick them up; the live nodes share
 * them evenly (src/log/pg-log-ownership.ts).
 */
const make = Effect.gen(function*() {
  const partitions = yield* LogPartitions
  const sql = yield* PgClient.PgClient
  // Before the head rows are written: a database fed from Kafka refuses this log untouched.
  yield* (yield* LogIdentityGuard).admit({ kind: "pg" })

  // Head rows exist for every partition from the start, so append only ever updates them.
  // Their number records the partition count the table was written with: keys of a log
  // written with another count are on other partitions, so refuse rather than reorder users.
  const heads = yield* sql<{ readonly n: number; readonly top: number }>`
    SELECT count(*)::int4 AS n, coalesce(max(partition), -1)::int4 AS top FROM signal_log_heads`
  const existing = heads[0] ?? { n: 0, top: -1 }
  if (existing.n > 0 && (existing.n !== partitions || existing.top !== partitions - 1)) {
    return yield* new LogMisconfigured({
      message: `PgLog: signal_log has ${existing.n} partitions but LOG_PARTITIONS is ${partitions}; ` +
        "changing the count would move users to other partitions"
    })
  }
  yield* sql`
    INSERT INTO signal_log_heads (partition, next_offset)
    SELECT p, 0 FROM generate_series(0, ${partitions - 1}::int4) AS p
    ON CONFLICT (partition) DO NOTHING`

  /** What this node appends, handed to its own consumers (`run`) without a query. */
  const local = makeLocalRecords()
  const append = yield* makePgAppend(sql, partitions, local)

  const ping = sql`SELECT 1`.pipe(
    Effect.timeout("2 seconds"),
    Effect.as(true),
    Effect.catchCause(() => Effect.succeed(false))
  )

  return makeSignalLog({
    name: "pg",
    partitions,
    append,
    reader: makePgReader(sql, partitions),
    consumer: yield* makePgConsumer(sql, partitions, local),
    ping,
    metrics: yield* Metrics
  })
})

export const PgLog = {
  /** SignalLog over the PostgreSQL of the PgClient (migrated), if the guard admits it. */
  layer: Layer.effect(SignalLog, make)
} as const
