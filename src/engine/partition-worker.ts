import { Clock, Duration, Effect, Schema } from "effect"
import { foldBatch, scopeUsageRows } from "../domain/batch-fold.ts"
import { eventIdFor } from "../domain/projection-rows.ts"
import { announcementsOf } from "../domain/scope-usage.ts"
import { defaultFoldSettings } from "../domain/user-state.ts"
import type { KnownEvent } from "../domain/verdict.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { Projections } from "../store/projections.ts"
import { stepSpan } from "../observability/tracing.ts"
import { makeActorStore } from "./actor-store.ts"
import { driftSignal } from "./drift-signal.ts"
import { makePartitionCounts } from "./partition-counts.ts"
import { makePartitionOwnership, type OwnershipPhase, type PartitionOwnership } from "./partition-ownership.ts"
import { retryBatch } from "./batch-retry.ts"
import type { PartitionFailing } from "./write-behind.ts"

import type { PartitionWorkerOptions, Processed, Timer } from "./partition-worker-options.ts"

export type { PartitionFailing } from "./write-behind.ts"
export type { PartitionWorkerOptions, Processed, Timer } from "./partition-worker-options.ts"

const nothing: Processed = { outcomes: [], drifts: [] }

class BatchFailed extends Schema.TaggedError<BatchFailed>()("BatchFailed", { message: Schema.String }) {}

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
    refold: reread === undefined ? undefined : (from, until) =>
      Effect.flatMap(reread(from, until), (entries) =>
        entries.length === 0 ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) => attempt(entries, now).pipe(retrying, Effect.orDie, Effect.asVoid)))
  })
  /** While a batch's reads are being retried: since when (ms), how many attempts failed, the last error. */
  let failing: PartitionFailing | undefined

  /**
   * The first copies of the batch's signals sent with an idempotency key (their ids derive from
   * the key, so a retry has its first copy's id), by event id: those still waiting to be committed,
   * then the stored ones; the batch adds its own first copies.
   */
  const firstCopies = (entries: ReadonlyArray<LogEntry>): Effect.Effect<Map<string, KnownEvent>> =>
    Effect.gen(function*() {
      const ids = new Set<string>()
      for (const { record } of entries) {
        if (record.kind === "signal" && record.idempotency_key !== undefined) ids.add(eventIdFor(record.signal_id))
      }
      if (ids.size === 0) return new Map<string, KnownEvent>()
      const known = new Map<string, KnownEvent>(hold.writer().findPending(ids).map((e) => [e.id, e]))
      const unknown = [...ids].filter((id) => !known.has(id))
      for (const e of unknown.length === 0 ? [] : yield* projections.findEvents(unknown)) known.set(e.id, e)
      return known
    })

  /** Folds records past `next` and hands their rows to the write-behind; fails (to be retried) on a failed read. */
  const attempt = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed, BatchFailed> =>
    Effect.gen(function*() {
      const users = [...new Set(entries.map((e) => e.key))]
      const states = yield* actors.statesOf(users)
      const known = yield* firstCopies(entries)
      const nextOffset = entries[entries.length - 1]!.offset + 1
      const behind = hold.writer()
      // The fold and the move of the in-memory state in one step, with no yield between: the
      // node's other partitions read the batch's counts from here on, and its outcomes are final
      // (the records are in the log; a crash before the commit folds them again, the same way).
      const folded = yield* Effect.sync(() => {
        const folded = foldBatch(entries, states, known, {
          partition: options.partition,
          settings,
          rules: options.rules,
          notify,
          projectFrom: options.projectFrom,
          committed: counts.committed,
          others: counts.others,
          reportedBefore: counts.reportedBefore,
          scopeKeys: actors.scopeKeysOf
        })
        actors.put(folded.states, now, behind.addingSeq())
        counts.commit(folded.counts, folded.reported)
        hold.advance(nextOffset)
        return folded
      }).pipe(stepSpan("PartitionWorker.fold"))
      const scopes = scopeUsageRows(folded.counts, options.partition, options.rules?.watched)
      yield* behind.add({
        nextOffset,
        sessions: folded.sessions,
        events: folded.events,
        notices: folded.notices,
        actors: options.deferSnapshots
          ? []
          : users.map((u) => ({ user_id: u, partition: options.partition, state: folded.states.get(u)! })),
        goals: folded.goals,
        scopeUsage: scopes.rows,
        watch: scopes.watch,
        // The other nodes add this commit's counts as soon as it commits.
        announce: options.shared ? announcementsOf(scopes.announced) : undefined
      }, entries.length)
      // Counts that budgets on other nodes watch reach them when the commit announces them: a
      // batch that moved one is answered once committed, so a client's next signal, sent to any
      // node, is judged with it.
      if (options.writeBehind?.announceFirst === true && scopes.announced.length > 0) yield* behind.settle
      return {
        outcomes: folded.outcomes,
        drifts: options.timers ? folded.drifts.map(({ record, drift }) => driftSignal(record, drift, now)) : []
      } satisfies Processed
    }).pipe(Effect.catchCause((cause) => Effect.fail(new BatchFailed({ message: String(cause) }))))

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
        Effect.tapError((e) =>
          Effect.gen(function*() {
            const at = yield* Clock.currentTimeMillis
            failing = { since: failing?.since ?? at, attempts: (failing?.attempts ?? 0) + 1, error: e.message }
            yield* Effect.logError(`partition ${options.partition}: batch failed, retrying`, e.message)
          })
        ),
        retrying,
        Effect.tap(() => Effect.sync(() => void (failing = undefined))),
        Effect.orDie,
        Effect.flatMap((processed) =>
          options.writeBehind !== undefined
            ? Effect.succeed(processed)
            : Effect.andThen(hold.writer().settle, Effect.suspend(() =>
              hold.writer().fencedAt() === undefined ? Effect.succeed(processed) : Effect.andThen(hold.resyncIfFenced, afterResync(fresh, now))
            ))
        )
      )
    })

  /** Waits until what was folded so far is committed, resyncing first if another owner moved on. */
  const settle: Effect.Effect<void> = Effect.andThen(
    // In turn: a resync under way has added what it folded again before this waits.
    hold.turn(reread !== undefined ? hold.resyncIfFenced : Effect.void),
    Effect.suspend(() => {
      const waited = hold.writer()
      return Effect.andThen(waited.settle, Effect.suspend(() =>
        // Fenced while waiting: what is folded again is committed by the next write-behind.
        reread !== undefined && hold.phase() !== "closed" && (waited !== hold.writer() || hold.writer().fencedAt() !== undefined) ? settle : Effect.void
      ))
    })
  )

  const flush: Effect.Effect<void> = Effect.suspend(() => {
    const unsaved = actors.unsaved()
    const behind = hold.writer()
    const write = unsaved.length === 0 ? Effect.void : behind.add({
      nextOffset: hold.next(),
      sessions: [],
      events: [],
      notices: [],
      actors: unsaved.map((a) => ({ user_id: a.user_id, partition: options.partition, state: a.state })),
      goals: [],
      scopeUsage: [],
      watch: []
    }, 0)
    return Effect.andThen(write, behind.settle).pipe(Effect.flatMap(() =>
      behind.fencedAt() !== undefined
        ? Effect.die(`partition ${options.partition}: another owner moved the offset during a replay`)
        : Effect.sync(() => actors.saved(unsaved.map((a) => a.user_id)))
    ))
  })

  const worker: PartitionWorker = {
    partition: options.partition,
    phase: hold.phase,
    nextOffset: hold.next,
    committedOffset: () => hold.writer().committedOffset(),
    uncommitted: () => hold.writer().uncommitted(),
    failing: () => failing ?? hold.writer().failing(),
    process: (entries, now) => hold.turn(fold(entries, now)),
    settle,
    takeDue: actors.takeDue,
    restore: actors.restore,
    evictIdle: (now, idleMs) => actors.evictIdle(now, idleMs, hold.writer().committedSeq()),
    flush,
    actorCount: actors.size,
    timerCount: actors.timerCount,
    close: (within) => Effect.andThen(hold.close(within), Effect.sync(() => counts.close()))
  }
  return worker
})
