import type { PgClient } from "@effect/sql-pg"
import { Cause, Effect, Exit, Option, Queue, Schedule, type Scope } from "effect"
import type { LocalRecords } from "./local-records.ts"
import type { Announcements } from "./pg-log-notifications.ts"
import type { PartitionConsumer } from "./pg-log-ownership.ts"
import { decodeRows, READ_BATCH, readRows } from "./pg-log-table.ts"
import type { PartitionHandler } from "./signal-log.ts"

/** Fallback when a NOTIFY was missed (listener reconnecting): how often an idle partition looks. */
const POLL_MILLIS = 250

/** Transient read failures: 100 ms doubling, at most 5 s apart, forever. */
const backoff = Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("5 seconds")])

/** What the loops of one `run` share. */
export interface PartitionLoopContext {
  readonly sql: PgClient.PgClient
  readonly handler: PartitionHandler
  readonly local: LocalRecords
  readonly announcements: Announcements
  /** The partitions this node's consumers are at (between `assigned` and `revoked`). */
  readonly consuming: Set<number>
}

/** Set when the partition is let go: its consumer stops after its current batch. */
interface Stop {
  requested: boolean
}

/** Where a partition's consumer is. */
interface Cursor {
  readonly partition: number
  /** The next offset to hand to the handler. */
  next: number
  /** Whether to read the log before waiting, whatever the announced head says. */
  look: boolean
}

/** What this node appended right after the cursor needs no query; false when there is none. */
const takeAppended = ({ handler, local }: PartitionLoopContext, cursor: Cursor) =>
  Effect.gen(function*() {
    const appended = local.take(cursor.partition, cursor.next)
    if (appended.length === 0) return false
    yield* handler.batch(cursor.partition, appended)
    cursor.next = appended[appended.length - 1]!.offset + 1
    return true
  })

/**
 * Reads the log after the cursor and hands the records to the handler; false when it had none
 * (caught up). Fails with the first record that does not decode, after those before it.
 */
const readLog = ({ sql, handler, announcements: { heads } }: PartitionLoopContext, cursor: Cursor) =>
  Effect.gen(function*() {
    const { partition } = cursor
    cursor.look = false
    const announced = heads[partition]!
    const rows = yield* readRows(sql, partition, cursor.next, undefined, READ_BATCH).pipe(
      Effect.tapError((e) => Effect.logWarning(`PgLog: reading partition ${partition} failed, retrying: ${e.message}`)),
      Effect.retry(backoff)
    )
    if (rows.length > 0) {
      const { entries, failure } = yield* decodeRows(partition, rows, performance.now())
      if (entries.length > 0) {
        yield* handler.batch(partition, entries)
        cursor.next = entries[entries.length - 1]!.offset + 1
      }
      if (Option.isSome(failure)) return yield* failure.value
      if (rows.length === READ_BATCH) cursor.look = true
      return true
    }
    // Caught up as of this read: an unknown head is known now (unless lost again since).
    if (announced === Number.POSITIVE_INFINITY && heads[partition] === announced) heads[partition] = cursor.next
    return false
  })

/**
 * Consumes one owned partition: resume where the handler says, then batches in offset order,
 * waiting for a NOTIFY (or the poll interval) when caught up. Ends only by failing: with the
 * first record that does not decode, or with a handler defect; or, once `stop` is requested,
 * at the end of its batch.
 */
const consume = (ctx: PartitionLoopContext, partition: number, stop: Stop) =>
  Effect.gen(function*() {
    const { handler, local, consuming, announcements } = ctx
    const cursor: Cursor = { partition, next: yield* handler.assigned(partition), look: true }
    consuming.add(partition)
    yield* Effect.gen(function*() {
      // The log is read when a NOTIFY announced records past `next` (another node's, or this
      // node's that were not handed over), when the head is unknown, and on the poll; not
      // after this node's own appends, which the consumer already has.
      while (!stop.requested) {
        if (yield* takeAppended(ctx, cursor)) continue
        if ((cursor.look || announcements.heads[partition]! > cursor.next) && (yield* readLog(ctx, cursor))) continue
        // A missed NOTIFY is made up for by the poll.
        const woken = yield* Effect.timeoutOption(Queue.take(announcements.wakes[partition]!), POLL_MILLIS)
        if (Option.isNone(woken)) cursor.look = true
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
 * Runs `consume` for an owned partition until the scope closes or it is let go. A record that
 * does not decode stops the partition (no node skips it: the next owner stops there too); a
 * handler defect restarts it from `assigned` after a growing pause.
 */
const supervise = (ctx: PartitionLoopContext, partition: number, stop: Stop) =>
  Effect.gen(function*() {
    let pause = 500
    while (!stop.requested) {
      const exit = yield* Effect.exit(consume(ctx, partition, stop))
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

/** Starts the consumer of a partition this node has just won, in the scope of its lock. */
export const startPartition = (ctx: PartitionLoopContext, partition: number): Effect.Effect<PartitionConsumer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const stop: Stop = { requested: false }
    const fiber = yield* Effect.forkScoped(supervise(ctx, partition, stop))
    return {
      fiber,
      stop: () => {
        stop.requested = true
        Queue.offerUnsafe(ctx.announcements.wakes[partition]!, undefined)
      }
    }
  })
