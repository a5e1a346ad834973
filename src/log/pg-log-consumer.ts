import type { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Fiber, FiberSet, Option, Queue, type Scope } from "effect"
import type { LocalRecords } from "./local-records.ts"
import { listenForAppends, makeAnnouncements } from "./pg-log-notifications.ts"
import { holdPartitions } from "./pg-log-ownership.ts"
import { type PartitionLoopContext, startPartition } from "./pg-log-partition-loop.ts"
import type { LogConsumer, PartitionHandler } from "./signal-log.ts"

/**
 * PgLog's `run` and `assignment`. Ownership of partitions is a session advisory lock per
 * partition, held on a reserved connection (src/log/pg-log-ownership.ts), so a node that dies (or
 * loses that connection) releases its partitions and the others pick them up, and a node that
 * joins gets its share from the others. Records this node appended (`local`) reach the consumer
 * of their partition without a query.
 *
 * Its parts: the lock sessions (pg-log-ownership.ts), which start and stop the loop of each
 * partition won or let go (pg-log-partition-loop.ts), woken by the NOTIFYs of appends
 * (pg-log-notifications.ts).
 */
export const makePgConsumer = (
  sql: PgClient.PgClient,
  partitions: number,
  local: LocalRecords
): Effect.Effect<LogConsumer, never, Scope.Scope> =>
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

    // Consumers run in the layer's fibers as well as the caller's scope, so whichever closes
    // first stops them: left to the caller alone, a consumer that outlives the layer would hold
    // its reserved connections while the pool waits for them on close.
    const consumers = yield* FiberSet.make()

    const run = (handler: PartitionHandler): Effect.Effect<void, never, Scope.Scope> =>
      Effect.gen(function*() {
        const announcements = yield* makeAnnouncements(partitions)
        const loops: PartitionLoopContext = { sql, handler, local, announcements, consuming }
        const detach = local.attach({
          owns: (partition) => consuming.has(partition),
          ready: (partition) => void Queue.offerUnsafe(announcements.wakes[partition]!, undefined)
        })
        yield* Effect.addFinalizer(() => Effect.sync(detach))
        const started = yield* Deferred.make<void>()
        const locks = holdPartitions({
          sql,
          partitions,
          start: (partition) => startPartition(loops, partition),
          publish: (next) => void (share = next),
          started
        })
        const fiber = yield* FiberSet.run(consumers, Effect.all([listenForAppends(sql, announcements), locks], { concurrency: 2 }))
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
