import { PgClient } from "@effect/sql-pg"
import { Cause, Deferred, Effect, Exit, Fiber, FiberSet, Layer, Option, Queue, Schedule, type Scope } from "effect"
import type { SqlError } from "effect/sql/SqlError"
import type { LogRecord } from "../domain/records.ts"
import { partitionForKey } from "./murmur2.ts"
import { makeLocalRecords } from "./local-records.ts"
import { batchedAppend, decodeStored, LogMisconfigured, LogPartitions, serializeRecord, type UndecodableRecord } from "./shared.ts"
import {
  type AppendResult,
  type LogEntry,
  LogUnavailable,
  type PartitionHandler,
  SignalLog
} from "./signal-log.ts"

/** NOTIFY channel; the payload is the comma-separated partitions a commit appended to. */
const CHANNEL = "signal_log"
/** First key of the session advisory locks that say which node owns which partition. */
const LOCK_NAME = "signal-engine:signal_log"
const READ_BATCH = 500
/** Fallback when a NOTIFY was missed (listener reconnecting): how often an idle partition looks. */
const POLL_MILLIS = 250
/** How often a node tries to take partitions nobody holds (a dead node's locks go with its session). */
const ACQUIRE_MILLIS = 2_000

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
  "ConstraintError", "UniqueViolation", "DeadlockError", "SerializationError", "LockTimeoutError",
  "StatementTimeoutError", "SqlSyntaxError", "AuthorizationError", "AuthenticationError"
])

const unavailable = (what: string) => (error: SqlError) =>
  new LogUnavailable({
    message: `PgLog: ${what} failed: ${error.message}`,
    ...(refusedStatement.has(error.reason._tag) ? { notWritten: true } : {})
  })

/** Transient read failures: 100 ms doubling, at most 5 s apart, forever. */
const backoff = Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("5 seconds")])

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

/**
 * The `signals` log as a PostgreSQL table (migration 0002): `signal_log` holds the records,
 * `signal_log_heads` the next offset of each partition. Ownership of partitions is a session
 * advisory lock per partition, held on a reserved connection, so a node that dies (or loses
 * that connection) releases its partitions and another node picks them up.
 */
const make = Effect.gen(function*() {
  const partitions = yield* LogPartitions
  const sql = yield* PgClient.PgClient
  const partitionFor = (key: string) => partitionForKey(key, partitions)

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
  /** The partitions this node's consumers are at (between `assigned` and `revoked`). */
  const consuming = new Set<number>()
  /**
   * The partitions whose locks this node holds, its share of the log: undefined until its lock
   * session's first try, and again while that session reconnects. A won partition is in the
   * share before its worker has loaded it (readiness says "being loaded", not "ready with none").
   */
  let locked: Set<number> | undefined

  // One statement (so one transaction, and one round trip) for every queued record. The head
  // rows are locked in ascending partition order (no deadlock between nodes) and stay locked
  // until commit, so the offsets of a partition commit in offset order and are gapless: a
  // reader that sees offset n has seen every offset below it, and never skips a record that was
  // still uncommitted. Keep it so. After waiting for a lock, FOR UPDATE answers the head as the
  // previous writer committed it, so the offsets continue from there.
  const write = (records: ReadonlyArray<LogRecord>) =>
    Effect.gen(function*() {
      const placed = records.map((r) => partitionFor(r.user_id))
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
        -- Delivered to listeners when (and only if) the statement commits.
        SELECT l.partition, l.next_offset AS base, pg_notify(${CHANNEL}, ${touched.join(",")})
        FROM locked l ORDER BY l.partition`
      const base = new Map(heads.map((h) => [h.partition, Number(h.base)]))
      if (base.size !== touched.length) {
        return yield* Effect.die(new Error(`PgLog: signal_log_heads lacks partitions of ${touched.join(",")}`))
      }
      const results = placed.map((partition, i): AppendResult => ({ partition, offset: base.get(partition)! + index[i]! }))
      local.appended(records, values, results)
      return results
    }).pipe(Effect.mapError(unavailable("append")))

  // A 2 ms window: each append is a statement of the service's own database, which costs more
  // per write than a produce, and PgLog ingest measured no better without it.
  const append = yield* batchedAppend("PgLog", "2 millis", write)

  const readRows = (partition: number, from: number, until: number | undefined, limit: number) =>
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
  const decodeRows = (partition: number, rows: ReadonlyArray<Row>) =>
    Effect.sync(() => {
      const entries: Array<LogEntry> = []
      for (const row of rows) {
        const offset = Number(row.offset)
        const decoded = decodeStored(partition, offset, row.record)
        if (decoded._tag === "Failure") return { entries, failure: Option.some(decoded.failure) }
        entries.push({ partition, offset, key: row.key, record: decoded.success })
      }
      return { entries, failure: Option.none<UndecodableRecord>() }
    })

  const headOf = (partition: number) =>
    sql<{ readonly next_offset: bigint }>`SELECT next_offset FROM signal_log_heads WHERE partition = ${partition}`.pipe(
      Effect.map((rows) => Number(rows[0]?.next_offset ?? 0))
    )

  const readPartition = (
    partition: number,
    fromOffset: number,
    onBatch: (entries: ReadonlyArray<LogEntry>) => Effect.Effect<void>
  ) =>
    Effect.gen(function*() {
      const end = yield* headOf(partition).pipe(Effect.mapError(unavailable("readPartition")))
      let next = Math.max(0, fromOffset)
      while (next < end) {
        const rows = yield* readRows(partition, next, end, READ_BATCH).pipe(Effect.mapError(unavailable("readPartition")))
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

  const ping = sql`SELECT 1`.pipe(
    Effect.timeout("2 seconds"),
    Effect.as(true),
    Effect.catchCause(() => Effect.succeed(false))
  )

  /**
   * Consumes one owned partition: resume where the handler says, then batches in offset order,
   * waiting for a NOTIFY (or the poll interval) when caught up. Ends only by failing: with the
   * first record that does not decode, or with a handler defect.
   */
  const consume = (handler: PartitionHandler, partition: number, wake: Queue.Queue<void>) =>
    Effect.gen(function*() {
      let next = yield* handler.assigned(partition)
      consuming.add(partition)
      yield* Effect.gen(function*() {
        for (;;) {
          // What this node appended right after `next` needs no query.
          const appended = local.take(partition, next)
          if (appended.length > 0) {
            yield* handler.batch(partition, appended)
            next = appended[appended.length - 1]!.offset + 1
            continue
          }
          const rows = yield* readRows(partition, next, undefined, READ_BATCH).pipe(
            Effect.tapError((e) => Effect.logWarning(`PgLog: reading partition ${partition} failed, retrying: ${e.message}`)),
            Effect.retry(backoff)
          )
          if (rows.length === 0) {
            yield* Effect.timeoutOption(Queue.take(wake), POLL_MILLIS)
            continue
          }
          const { entries, failure } = yield* decodeRows(partition, rows)
          if (entries.length > 0) {
            yield* handler.batch(partition, entries)
            next = entries[entries.length - 1]!.offset + 1
          }
          if (Option.isSome(failure)) return yield* failure.value
        }
      }).pipe(Effect.ensuring(Effect.andThen(
        Effect.sync(() => {
          consuming.delete(partition)
          local.forget(partition)
        }),
        handler.revoked(partition)
      )))
    })

  /**
   * Runs `consume` for an owned partition until the scope closes. A record that does not decode
   * stops the partition (the lock stays held, so no node skips it); a handler defect restarts it
   * from `assigned` after a growing pause.
   */
  const supervise = (handler: PartitionHandler, partition: number, wake: Queue.Queue<void>) =>
    Effect.gen(function*() {
      let pause = 500
      for (;;) {
        const exit = yield* Effect.exit(consume(handler, partition, wake))
        if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return
        const failure = Cause.findErrorOption(exit.cause)
        if (Option.isSome(failure)) {
          yield* Effect.logError(
            `PgLog: partition ${partition} STOPPED: ${failure.value.message}. ` +
              "No later record of this partition is processed until the record is repaired and the node restarted."
          )
          return
        }
        yield* Effect.logError(`PgLog: partition ${partition} handler failed; restarting in ${pause} ms`, exit.cause)
        yield* Effect.sleep(pause)
        pause = Math.min(pause * 2, 30_000)
      }
    })

  /** Forwards NOTIFYs to the partitions' wake-up queues, reconnecting the listener as needed. */
  const listenLoop = (wakes: ReadonlyArray<Queue.Queue<void>>) =>
    Effect.scoped(Effect.gen(function*() {
      const notifications = yield* sql.listen(CHANNEL)
      // Whatever was appended while no listener was up would otherwise wait for the poll.
      for (const wake of wakes) yield* Queue.offer(wake, undefined)
      for (;;) {
        const notification = yield* Queue.take(notifications)
        for (const p of notification.payload.split(",")) {
          const wake = wakes[Number(p)]
          if (wake !== undefined) yield* Queue.offer(wake, undefined)
        }
      }
    })).pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("PgLog: LISTEN connection lost; polling until it is back", cause).pipe(
          Effect.andThen(Effect.sleep("1 second"))
        )
      ),
      Effect.forever
    )

  /**
   * One lock session: a reserved connection whose advisory locks are this node's partitions.
   * Fails when the connection does; closing it stops the partitions (revoked) and releases
   * the locks before the connection goes back to the pool.
   */
  const lockSession = (
    handler: PartitionHandler,
    wakes: ReadonlyArray<Queue.Queue<void>>,
    started: Deferred.Deferred<void>
  ) =>
    Effect.gen(function*() {
      const connection = yield* sql.reserve
      const execute = (statement: string, params: ReadonlyArray<unknown>) =>
        connection.execute(statement, params, undefined)
      // Runs after the partition fibers below have stopped (finalizers run in reverse order).
      yield* Effect.addFinalizer(() => Effect.ignore(execute("SELECT pg_advisory_unlock_all()", [])))
      const owned = new Set<number>()
      yield* Effect.addFinalizer(() => Effect.sync(() => void (locked = undefined)))
      for (;;) {
        const free = range(partitions).filter((p) => !owned.has(p))
        if (free.length > 0) {
          const rows: ReadonlyArray<{ readonly p: number; readonly ok: boolean }> = yield* execute(
            "SELECT p, pg_try_advisory_lock(hashtext($1), p) AS ok FROM unnest($2::int4[]) AS p ORDER BY p",
            [LOCK_NAME, free]
          )
          const won = rows.filter((r) => r.ok).map((r) => r.p)
          for (const p of won) {
            owned.add(p)
            yield* Effect.forkScoped(supervise(handler, p, wakes[p]!))
          }
          if (won.length > 0) yield* Effect.logInfo(`PgLog: now owns partitions ${[...owned].sort((a, b) => a - b).join(",")}`)
        } else {
          // Owning everything, this only checks that the locks' session is still there.
          yield* execute("SELECT 1", [])
        }
        locked = new Set(owned)
        yield* Deferred.succeed(started, undefined)
        yield* Effect.sleep(ACQUIRE_MILLIS)
      }
    })

  // Consumers run in the layer's fibers as well as the caller's scope, so whichever closes
  // first stops them: left to the caller alone, a consumer that outlives the layer would hold
  // its reserved connections while the pool waits for them on close.
  const consumers = yield* FiberSet.make()

  const run = (handler: PartitionHandler): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const wakes = yield* Effect.forEach(range(partitions), () => Queue.sliding<void>(1))
      const detach = local.attach({
        owns: (partition) => consuming.has(partition),
        ready: (partition) => void Queue.offerUnsafe(wakes[partition]!, undefined)
      })
      yield* Effect.addFinalizer(() => Effect.sync(detach))
      const started = yield* Deferred.make<void>()
      const locks = lockSession(handler, wakes, started).pipe(
        Effect.scoped,
        Effect.catchCause((cause) =>
          Effect.logWarning("PgLog: partition lock session ended; its partitions were released. Reconnecting", cause)
            .pipe(
              Effect.andThen(Deferred.succeed(started, undefined)),
              Effect.andThen(Effect.sleep("1 second"))
            )
        ),
        Effect.forever
      )
      const fiber = yield* FiberSet.run(consumers, Effect.all([listenLoop(wakes), locks], { concurrency: 2 }))
      yield* Effect.addFinalizer(() => Fiber.interrupt(fiber))
      // With one node, every partition is owned (and assigned) when run returns.
      yield* Deferred.await(started)
    })

  return SignalLog.of({
    name: "pg",
    partitions,
    partitionFor,
    append,
    run,
    readPartition,
    endOffsets,
    startOffsets,
    ping,
    // Partitions are held by advisory locks, which a dead node's session drops at once: a node's
    // share is the partitions it holds the locks of, once it has tried for them.
    assignment: Effect.sync(() => (locked === undefined ? Option.none() : Option.some(new Set(locked))))
  })
})

export const PgLog = {
  /** SignalLog over the PostgreSQL of the PgClient (migrated to 0002 or later). */
  layer: Layer.effect(SignalLog, make)
} as const
