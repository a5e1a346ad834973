import type { PgClient } from "@effect/sql-pg"
import { Cause, Deferred, Effect, Exit, Fiber, FiberSet, Option, Queue, Schedule, type Scope } from "effect"
import type { LocalRecords } from "./local-records.ts"
import { lockSession } from "./pg-log-ownership.ts"
import { CHANNEL, decodeRows, READ_BATCH, readRows } from "./pg-log-table.ts"
import { range } from "./partitions.ts"
import type { PartitionHandler } from "./signal-log.ts"

/** Fallback when a NOTIFY was missed (listener reconnecting): how often an idle partition looks. */
const POLL_MILLIS = 250

/** Transient read failures: 100 ms doubling, at most 5 s apart, forever. */
const backoff = Schedule.min([Schedule.exponential("100 millis"), Schedule.spaced("5 seconds")])

/** Set when the partition is let go: its consumer stops after its current batch. */
interface Stop {
  requested: boolean
}

/**
 * PgLog's `run` and `assignment`. Ownership of partitions is a session advisory lock per
 * partition, held on a reserved connection (src/log/pg-log-ownership.ts), so a node that dies (or
 * loses that connection) releases its partitions and the others pick them up, and a node that
 * joins gets its share from the others. Records this node appended (`local`) reach the consumer
 * of their partition without a query.
 */
export const makePgConsumer = (sql: PgClient.PgClient, partitions: number, local: LocalRecords) =>
  Effect.gen(function*() {
    /** The partitions this node's consumers are at (between `assigned` and `revoked`). */
    const consuming = new Set<number>()
    /**
     * The partitions whose locks this node holds, its share of the log: none until its lock
     * session's first round, while partitions are on their way to it, and while that session
     * reconnects. A won partition is in the share before its worker has loaded it (readiness says
     * "being loaded", not "ready with none").
     */
    let share: Option.Option<ReadonlySet<number>> = Option.none()

    /**
     * Consumes one owned partition: resume where the handler says, then batches in offset order,
     * waiting for a NOTIFY (or the poll interval) when caught up. Ends only by failing: with the
     * first record that does not decode, or with a handler defect; or, once `stop` is requested,
     * at the end of its batch.
     */
    const consume = (handler: PartitionHandler, partition: number, wake: Queue.Queue<void>, heads: Array<number>, stop: Stop) =>
      Effect.gen(function*() {
        let next = yield* handler.assigned(partition)
        consuming.add(partition)
        yield* Effect.gen(function*() {
          // The log is read when a NOTIFY announced records past `next` (another node's, or this
          // node's that were not handed over), when the head is unknown, and on the poll; not
          // after this node's own appends, which the consumer already has.
          let look = true
          while (!stop.requested) {
            // What this node appended right after `next` needs no query.
            const appended = local.take(partition, next)
            if (appended.length > 0) {
              yield* handler.batch(partition, appended)
              next = appended[appended.length - 1]!.offset + 1
              continue
            }
            if (look || heads[partition]! > next) {
              look = false
              const announced = heads[partition]!
              const rows = yield* readRows(sql, partition, next, undefined, READ_BATCH).pipe(
                Effect.tapError((e) => Effect.logWarning(`PgLog: reading partition ${partition} failed, retrying: ${e.message}`)),
                Effect.retry(backoff)
              )
              if (rows.length > 0) {
                const { entries, failure } = yield* decodeRows(partition, rows)
                if (entries.length > 0) {
                  yield* handler.batch(partition, entries)
                  next = entries[entries.length - 1]!.offset + 1
                }
                if (Option.isSome(failure)) return yield* failure.value
                if (rows.length === READ_BATCH) look = true
                continue
              }
              // Caught up as of this read: an unknown head is known now (unless lost again since).
              if (announced === Number.POSITIVE_INFINITY && heads[partition] === announced) heads[partition] = next
            }
            // A missed NOTIFY is made up for by the poll.
            if (Option.isNone(yield* Effect.timeoutOption(Queue.take(wake), POLL_MILLIS))) look = true
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
    const supervise = (handler: PartitionHandler, partition: number, wake: Queue.Queue<void>, heads: Array<number>, stop: Stop) =>
      Effect.gen(function*() {
        let pause = 500
        while (!stop.requested) {
          const exit = yield* Effect.exit(consume(handler, partition, wake, heads, stop))
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
    const listenLoop = (wakes: ReadonlyArray<Queue.Queue<void>>, heads: Array<number>) =>
      Effect.scoped(Effect.gen(function*() {
        const notifications = yield* sql.listen(CHANNEL)
        // Whatever was appended while no listener was up would otherwise wait for the poll.
        heads.fill(Number.POSITIVE_INFINITY)
        for (const wake of wakes) yield* Queue.offer(wake, undefined)
        for (;;) {
          const notification = yield* Queue.take(notifications)
          // `<partition>:<head>`; a payload of partitions alone (an older node's) means "look".
          for (const announced of notification.payload.split(",")) {
            const [p, head] = announced.split(":")
            const partition = Number(p)
            const wake = wakes[partition]
            if (wake === undefined) continue
            heads[partition] = Math.max(heads[partition]!, head === undefined ? Number.POSITIVE_INFINITY : Number(head))
            yield* Queue.offer(wake, undefined)
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

    // Consumers run in the layer's fibers as well as the caller's scope, so whichever closes
    // first stops them: left to the caller alone, a consumer that outlives the layer would hold
    // its reserved connections while the pool waits for them on close.
    const consumers = yield* FiberSet.make()

    const run = (handler: PartitionHandler): Effect.Effect<void, never, Scope.Scope> =>
      Effect.gen(function*() {
        const wakes = yield* Effect.forEach(range(partitions), () => Queue.sliding<void>(1))
        /** Per partition, the highest next offset a NOTIFY announced (infinite: unknown). */
        const heads = range(partitions).map(() => Number.POSITIVE_INFINITY)
        const detach = local.attach({
          owns: (partition) => consuming.has(partition),
          ready: (partition) => void Queue.offerUnsafe(wakes[partition]!, undefined)
        })
        yield* Effect.addFinalizer(() => Effect.sync(detach))
        const started = yield* Deferred.make<void>()
        const start = (partition: number) =>
          Effect.gen(function*() {
            const stop: Stop = { requested: false }
            const fiber = yield* Effect.forkScoped(supervise(handler, partition, wakes[partition]!, heads, stop))
            return {
              fiber,
              stop: () => {
                stop.requested = true
                Queue.offerUnsafe(wakes[partition]!, undefined)
              }
            }
          })
        const publish = (next: Option.Option<ReadonlySet<number>>) => void (share = next)
        const locks = lockSession({ sql, partitions, start, publish, started }).pipe(
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
        const fiber = yield* FiberSet.run(consumers, Effect.all([listenLoop(wakes, heads), locks], { concurrency: 2 }))
        yield* Effect.addFinalizer(() => Fiber.interrupt(fiber))
        // With one node, every partition is owned (and assigned) when run returns.
        yield* Deferred.await(started)
      })

    return {
      run,
      // Partitions are held by advisory locks, which a dead node's session drops at once: a node's
      // share is the partitions it holds the locks of, once it has its share.
      assignment: Effect.sync(() => share)
    }
  })
