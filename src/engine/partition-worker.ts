import { Clock, Duration, Effect } from "effect"
import { defaultFoldSettings } from "../domain/user-state.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { Projections } from "../store/projections.ts"
import { flushSnapshots, makeActorStore } from "./actor-store.ts"
import { makePartitionCounts } from "./partition-counts.ts"
import { type BatchFailed, foldInto } from "./partition-fold.ts"
import { makePartitionOwnership, type OwnershipPhase, type PartitionOwnership } from "./partition-ownership.ts"
import { retryBatch } from "./batch-retry.ts"
import type { PartitionFailing } from "./write-behind.ts"

import type { PartitionWorkerOptions, Processed, Timer } from "./partition-worker-options.ts"

export type { PartitionWorkerOptions, Processed, Timer } from "./partition-worker-options.ts"
export type { PartitionFailing } from "./write-behind.ts"

const nothing: Processed = { outcomes: [], drifts: [] }

/** One owned partition, as the Processor (and replay) drive it. */
export interface PartitionWorker {
  readonly partition: number
  readonly phase: () => OwnershipPhase
  readonly nextOffset: () => number
  /** Where the committed projections are: `nextOffset` less what is still being written. */
  readonly committedOffset: () => number
  /** Records folded (answered) whose projections are not committed yet. */
  readonly uncommitted: () => number
  readonly failing: () => PartitionFailing | undefined
  /**
   * Folds a batch and answers the outcomes of its records: once folded (write-behind), else once
   * committed. Records before `nextOffset` are skipped (redelivery).
   */
  readonly process: (entries: ReadonlyArray<LogEntry>, now: number) => Effect.Effect<Processed>
  /** Waits until what was folded so far is committed (a read that must see this node's verdicts). */
  readonly settle: Effect.Effect<void>
  /** Timers due at `now`, removed from the set: the caller appends their ticks. */
  readonly takeDue: (now: number) => ReadonlyArray<Timer>
  /** A tick that could not be appended is retried on the next sweep. */
  readonly restore: (timer: Timer) => void
  /** Drops actors idle for longer than `idleMs` whose state is committed; unsaved ones stay. */
  readonly evictIdle: (now: number, idleMs: number) => void
  /** Commits what is folded, with the states `deferSnapshots` held back, and waits for it. */
  readonly flush: Effect.Effect<void>
  readonly actorCount: () => number
  readonly timerCount: () => number
  /**
   * Lets the partition go: commits what is folded (waiting at most `within`; what is not
   * committed by then is folded again by the next owner), and stops lending its counts.
   */
  readonly close: (within?: Duration.Input) => Effect.Effect<void>
}

/**
 * The owner of one partition: folds its batches, one record at a time per user in offset order,
 * with the actors of its keys (src/engine/actor-store.ts), and answers a folded batch's outcomes
 * at once; its projections, actor states and next offset are committed behind it by the hold's
 * write-behind (src/engine/partition-ownership.ts, which also names where the hold stands).
 */
export const makePartitionWorker = Effect.fnUntraced(function*(options: PartitionWorkerOptions) {
  const projections = yield* Projections
  const notify = options.notify ?? true
  const settings = options.settings ?? defaultFoldSettings
  const actors = yield* makeActorStore(projections, options.partition, { timers: options.timers, deferSnapshots: options.deferSnapshots === true })
  const counts = yield* makePartitionCounts(projections, options.partition, options.shared)
  const reread = options.writeBehind?.reread
  const retrying = retryBatch(options.database)
  const hold: PartitionOwnership = yield* makePartitionOwnership({
    projections,
    log: options.log,
    partition: options.partition,
    maxLag: options.writeBehind?.maxLag ?? Number.POSITIVE_INFINITY,
    committed: (others) => options.shared?.note(others),
    metrics: options.metrics,
    forget: Effect.andThen(Effect.sync(actors.forgetAll), counts.reload),
    refold: reread === undefined ?
      undefined :
      (from, until) =>
        Effect.flatMap(reread(from, until), (entries) =>
          entries.length === 0
            ? Effect.void
            : Effect.flatMap(Clock.currentTimeMillis, (now) => attempt(entries, now).pipe(retrying, Effect.orDie, Effect.asVoid)))
  })
  const attempt = foldInto({ projections, actors, counts, hold: () => hold, options, settings, notify })
  const failures = batchFailures(options.partition, retryBatch(options.database))

  /** After a resync, the batch again: records past the stored offset that the log did not give again must be read again. */
  const afterResync = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    Effect.suspend(() =>
      entries.length > 0 && entries[0]!.offset > hold.next()
        ? Effect.die(`partition ${options.partition}: records from offset ${hold.next()} must be read again`)
        : fold(entries, now)
    )

  /** What a batch does in each phase of the hold (the caller holds the turn). */
  const fold = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    Effect.suspend((): Effect.Effect<Processed> => {
      switch (hold.phase()) {
        case "closed":
          return Effect.die(`partition ${options.partition}: a batch for a partition let go`)
        case "resyncing":
          return Effect.die(`partition ${options.partition}: a batch during a resync`)
        case "fenced":
          return Effect.andThen(hold.resyncIfFenced, afterResync(entries, now))
        case "open": {
          const next = hold.next()
          const fresh = entries.filter((e) => e.offset >= next)
          if (fresh.length === 0) return Effect.succeed(nothing)
          if (fresh[0]!.offset === next) return foldFresh(fresh, now)
          // Records missing before this batch: another owner committed past `next` (this one is
          // stale: resync), or they are gone from the log (retention; the consumer said so).
          return Effect.flatMap(projections.nextOffset(options.log, options.partition), (stored) =>
            stored > next ? Effect.andThen(hold.resync, afterResync(entries, now)) : foldFresh(fresh, now))
        }
      }
    })

  const foldFresh = (fresh: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    Effect.suspend(() => {
      // A signal accepted by a node that held newer rules is judged by them (or newer): reload first.
      let wanted = 0
      for (const { record } of fresh) if (record.kind === "signal" && (record.rules_version ?? 0) > wanted) wanted = record.rules_version!
      const current = options.rules !== undefined && notify && wanted > options.rules.version()
        ? options.rules.catchUp(wanted)
        : Effect.void
      return Effect.andThen(current, attempt(fresh, now)).pipe(
        failures.retried,
        Effect.orDie,
        Effect.flatMap((processed) =>
          options.writeBehind !== undefined
            ? Effect.succeed(processed)
            : Effect.andThen(
              hold.writer().settle,
              Effect.suspend(() =>
                hold.writer().fencedAt() === undefined ? Effect.succeed(processed) : Effect.andThen(hold.resyncIfFenced, afterResync(fresh, now))
              )
            )
        )
      )
    })

  const worker: PartitionWorker = {
    partition: options.partition,
    phase: hold.phase,
    nextOffset: hold.next,
    committedOffset: () => hold.writer().committedOffset(),
    uncommitted: () => hold.writer().uncommitted(),
    failing: () => failures.current() ?? hold.writer().failing(),
    process: (entries, now) => hold.turn(fold(entries, now)),
    settle: hold.settle,
    takeDue: actors.takeDue,
    restore: actors.restore,
    evictIdle: (now, idleMs) => actors.evictIdle(now, idleMs, hold.writer().committedSeq()),
    flush: flushSnapshots(actors, hold, options.partition),
    actorCount: actors.size,
    timerCount: actors.timerCount,
    close: (within) => Effect.andThen(hold.close(within), Effect.sync(() => counts.close()))
  }
  return worker
})

/**
 * A batch whose reads fail is retried (src/engine/batch-retry.ts); while it is, readiness shows
 * since when, how many attempts failed and the last error.
 */
const batchFailures = (partition: number, retrying: <A, E>(attempt: Effect.Effect<A, E>) => Effect.Effect<A, E>) => {
  let failing: PartitionFailing | undefined
  return {
    current: () => failing,
    retried: <A>(attempt: Effect.Effect<A, BatchFailed>): Effect.Effect<A, BatchFailed> =>
      attempt.pipe(
        Effect.tapError((e) =>
          Effect.gen(function*() {
            const at = yield* Clock.currentTimeMillis
            failing = { since: failing?.since ?? at, attempts: (failing?.attempts ?? 0) + 1, error: e.message }
            yield* Effect.logError(`partition ${partition}: batch failed, retrying`, e.message)
          })
        ),
        retrying,
        Effect.tap(() => Effect.sync(() => void (failing = undefined)))
      )
  }
}
