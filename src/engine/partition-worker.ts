import { Clock, Duration, Effect, Schema, Semaphore } from "effect"
import { foldBatch, scopeUsageRows } from "../domain/batch-fold.ts"
import { eventIdFor } from "../domain/projection-rows.ts"
import { noRecipients, recipientsOf } from "../domain/recipients.ts"
import { announcementsOf, makeScopeKeys } from "../domain/scope-usage.ts"
import { timeoutDue } from "../domain/user-fold.ts"
import { defaultFoldSettings, emptyUserState, type UserState } from "../domain/user-state.ts"
import type { KnownEvent } from "../domain/verdict.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { Projections } from "../store/projections.ts"
import { stepSpan } from "../observability/tracing.ts"
import { driftSignal } from "./drift-signal.ts"
import { makePartitionCounts } from "./partition-counts.ts"
import { retryBatch } from "./batch-retry.ts"
import { makeTimerIndex } from "./timer-index.ts"
import { makeWriteBehind, type PartitionFailing } from "./write-behind.ts"

import type { PartitionWorkerOptions, Processed, Timer } from "./partition-worker-options.ts"

export type { PartitionFailing } from "./write-behind.ts"
export type { PartitionWorkerOptions, Processed, Timer } from "./partition-worker-options.ts"

const nothing: Processed = { outcomes: [], drifts: [] }

interface Actor {
  state: UserState
  touchedAt: number
  /** The write-behind's write that carries this state: the actor may be evicted once it committed. */
  savedBy: number
}

class BatchFailed extends Schema.TaggedError<BatchFailed>()("BatchFailed", { message: Schema.String }) {}

/**
 * The owner of one partition: its offset, the actors (per-user state) of its keys, and the
 * inactivity timers of their open sessions. Records are folded one at a time per user, in
 * offset order; a folded batch's outcomes are answered at once, and its projections, actor
 * states and next offset are committed behind it (src/engine/write-behind.ts). Actors live in
 * memory while active, are loaded lazily from their snapshot, and are evicted when idle and
 * committed, so memory follows active users, not all users.
 */
export const makePartitionWorker = Effect.fnUntraced(function*(options: PartitionWorkerOptions) {
  const projections = yield* Projections
  const notify = options.notify ?? true
  const settings = options.settings ?? defaultFoldSettings
  const actors = new Map<string, Actor>()
  /** Actors whose state is newer than their snapshot (deferSnapshots only). */
  const unsaved = new Set<string>()
  /** The running inactivity timers, by user (a user has a timer per open session). */
  const timers = makeTimerIndex<Timer>()
  let next = yield* projections.nextOffset(options.log, options.partition)

  /** The counter keys of each actor's last signal, reused by its next. */
  const scopeKeys = makeScopeKeys()
  const counts = yield* makePartitionCounts(projections, options.partition, options.shared)
  /** Folds and resyncs take turns (the log hands one batch at a time; a resync starts on its own). */
  const lock = yield* Semaphore.make(1)
  /** Let go (revoked): a resync started by a late fence must not write for it any more. */
  let closed = false
  const reread = options.writeBehind?.reread
  const retrying = retryBatch(options.database)
  const startWriting = (from: number) =>
    makeWriteBehind({
      projections,
      log: options.log,
      partition: options.partition,
      from,
      maxLag: options.writeBehind?.maxLag ?? Number.POSITIVE_INFINITY,
      committed: (others) => options.shared?.note(others),
      fenced: reread === undefined ? undefined : lock.withPermits(1)(Effect.suspend(() => resyncNow)),
      metrics: options.metrics
    })
  let behind = yield* startWriting(next)

  const trackTimers = (userId: string, state: UserState) => {
    if (!options.timers) return
    timers.set(userId, Object.values(state.open).map((session) => ({
      userId,
      orgId: session.org_id,
      environment: session.environment,
      sessionId: session.id,
      lastActivityAt: session.last_activity_at,
      due: timeoutDue(session)
    })))
  }

  if (options.timers) {
    for (const snapshot of yield* projections.actorsWithOpenSessions(options.partition)) {
      trackTimers(snapshot.user_id, snapshot.state)
    }
  }

  /**
   * The first copies of the batch's signals sent with an idempotency key (their ids derive from
   * the key, so a retry has its first copy's id), by event id: those still waiting to be committed,
   * then the stored ones; the batch adds its own first copies.
   */
  const firstCopies = (entries: ReadonlyArray<LogEntry>) =>
    Effect.gen(function*() {
      const ids = new Set<string>()
      for (const { record } of entries) {
        if (record.kind === "signal" && record.idempotency_key !== undefined) ids.add(eventIdFor(record.signal_id))
      }
      if (ids.size === 0) return new Map<string, KnownEvent>()
      const known = new Map<string, KnownEvent>(behind.findPending(ids).map((e) => [e.id, e]))
      const unknown = [...ids].filter((id) => !known.has(id))
      for (const e of unknown.length === 0 ? [] : yield* projections.findEvents(unknown)) known.set(e.id, e)
      return known
    })

  const attempt = (entries: ReadonlyArray<LogEntry>, now: number) =>
    Effect.gen(function*() {
      const users = [...new Set(entries.map((e) => e.key))]
      const loaded = yield* projections.loadActors(users.filter((u) => !actors.has(u)))
      const states = new Map<string, UserState>()
      for (const u of users) states.set(u, actors.get(u)?.state ?? loaded.get(u) ?? emptyUserState)
      const known = yield* firstCopies(entries)
      const nextOffset = entries[entries.length - 1]!.offset + 1
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
          scopeKeys: scopeKeys.keysOf
        })
        const savedBy = behind.addingSeq()
        for (const [u, state] of folded.states) {
          actors.set(u, { state, touchedAt: now, savedBy })
          trackTimers(u, state)
          if (options.deferSnapshots) unsaved.add(u)
        }
        counts.commit(folded.counts, folded.reported)
        next = nextOffset
        // Addressed with the rules the batch was judged by: a notify rule names its channels.
        const recipients = options.rules === undefined ? noRecipients : recipientsOf(folded.notices, options.rules)
        return { ...folded, recipients }
      }).pipe(stepSpan("PartitionWorker.fold"))
      const scopes = scopeUsageRows(folded.counts, options.partition, options.rules?.watched)
      yield* behind.add({
        nextOffset,
        sessions: folded.sessions,
        events: folded.events,
        notices: folded.notices,
        recipients: folded.recipients,
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

  /**
   * Another owner committed past this one (a rebalance, a lost lease): forget the actors and
   * counts and take the stored offset. What this owner folded past it is read from the log and
   * folded again (the same verdicts: they were answered already); without `reread` the log must
   * deliver it again (`process` dies on the gap, and the consumer restarts the partition).
   */
  const resyncNow: Effect.Effect<void> = Effect.suspend(() => (behind.fencedAt() === undefined || closed ? Effect.void : resyncFromStore))

  const resyncFromStore: Effect.Effect<void> = Effect.gen(function*() {
    const folded = next
    yield* behind.close
    actors.clear()
    scopeKeys.clear()
    unsaved.clear()
    yield* counts.reload
    next = yield* projections.nextOffset(options.log, options.partition)
    behind = yield* startWriting(next)
    yield* Effect.logWarning(`partition ${options.partition}: another owner moved the partition on; resyncing from offset ${next}`)
    if (reread !== undefined && next < folded) {
      const entries = yield* reread(next, folded)
      if (entries.length > 0) yield* attempt(entries, yield* Clock.currentTimeMillis).pipe(retrying, Effect.orDie)
    }
  })

  const resync = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    Effect.andThen(resyncNow, Effect.suspend(() => {
      if (entries.length > 0 && entries[0]!.offset > next) {
        return Effect.die(`partition ${options.partition}: records from offset ${next} must be read again`)
      }
      return fold(entries, now)
    }))

  /**
   * Folds a batch and answers the outcomes of its records: once folded (write-behind), else once
   * committed. Records before `next` are skipped (redelivery).
   */
  const process = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    lock.withPermits(1)(fold(entries, now))

  const fold = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    Effect.suspend(() => {
      if (closed) return Effect.die(`partition ${options.partition}: a batch for a partition let go`)
      if (behind.fencedAt() !== undefined) return resync(entries, now)
      const fresh = entries.filter((e) => e.offset >= next)
      if (fresh.length === 0) return Effect.succeed(nothing)
      // Records missing before this batch: another owner committed past `next` (this one is
      // stale: resync), or they are gone from the log (retention; the consumer said so).
      if (fresh[0]!.offset > next) {
        return Effect.flatMap(projections.nextOffset(options.log, options.partition), (stored) =>
          stored > next && !closed ? Effect.andThen(resyncFromStore, resync(entries, now)) : foldFresh(fresh, now))
      }
      return foldFresh(fresh, now)
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
            : Effect.andThen(behind.settle, Effect.suspend(() => (behind.fencedAt() === undefined ? Effect.succeed(processed) : resync(fresh, now))))
        )
      )
    })

  /** Waits until what was folded so far is committed, resyncing first if another owner moved on. */
  const settle: Effect.Effect<void> = Effect.andThen(
    // Under the lock: a resync under way has added what it folded again before this waits.
    lock.withPermits(1)(Effect.suspend(() => (reread !== undefined ? resyncNow : Effect.void))),
    Effect.suspend(() => {
      const waited = behind
      return Effect.andThen(waited.settle, Effect.suspend(() =>
        // Fenced while waiting: what is folded again is committed by the next write-behind.
        reread !== undefined && !closed && (waited !== behind || behind.fencedAt() !== undefined) ? settle : Effect.void
      ))
    })
  )

  /** While a batch's reads are being retried: since when (ms), how many attempts failed, the last error. */
  let failing: PartitionFailing | undefined

  /** Timers due at `now`, removed from the set: the caller appends their ticks. */
  const takeDue = (now: number): ReadonlyArray<Timer> => timers.takeDue(now)

  /** A tick that could not be appended is retried on the next sweep. */
  const restore = (timer: Timer) =>
    timers.set(timer.userId, [...timers.get(timer.userId).filter((t) => t.sessionId !== timer.sessionId), timer])

  /**
   * Drops actors idle for longer than `idleMs` whose state is committed (in the snapshot table);
   * unsaved ones stay.
   */
  const evictIdle = (now: number, idleMs: number) => {
    const committed = behind.committedSeq()
    for (const [u, actor] of actors) {
      if (now - actor.touchedAt > idleMs && actor.savedBy <= committed && !unsaved.has(u)) {
        actors.delete(u)
        scopeKeys.forget(u)
      }
    }
  }

  /** Commits what is folded, with the states `deferSnapshots` held back, and waits for it. */
  const flush: Effect.Effect<void> = Effect.suspend(() => {
    const users = [...unsaved]
    const write = users.length === 0 ? Effect.void : behind.add({
      nextOffset: next,
      sessions: [],
      events: [],
      notices: [],
      recipients: noRecipients,
      actors: users.map((u) => ({ user_id: u, partition: options.partition, state: actors.get(u)!.state })),
      goals: [],
      scopeUsage: [],
      watch: []
    }, 0)
    return Effect.andThen(write, behind.settle).pipe(Effect.flatMap(() =>
      behind.fencedAt() !== undefined
        ? Effect.die(`partition ${options.partition}: another owner moved the offset during a replay`)
        : Effect.sync(() => {
          for (const u of users) unsaved.delete(u)
        })
    ))
  })

  return {
    partition: options.partition,
    nextOffset: () => next,
    /** Where the committed projections are: `nextOffset` less what is still being written. */
    committedOffset: () => behind.committedOffset(),
    /** Records folded (answered) whose projections are not committed yet. */
    uncommitted: () => behind.uncommitted(),
    failing: () => failing ?? behind.failing(),
    process,
    /** Waits until what was folded so far is committed (a read that must see this node's verdicts). */
    settle,
    takeDue,
    restore,
    evictIdle,
    flush,
    actorCount: () => actors.size,
    /**
     * Lets the partition go: commits what is folded (waiting at most `within`; what is not
     * committed by then is folded again by the next owner), and stops lending its counts.
     */
    close: (within: Duration.Input = Duration.seconds(10)) =>
      Effect.andThen(
        Effect.sync(() => void (closed = true)),
        Effect.andThen(
        Effect.ignore(Effect.timeout(Effect.suspend(() => behind.settle), within)),
        Effect.andThen(Effect.suspend(() => behind.close), Effect.sync(() => counts.close()))
      )),
    timerCount: timers.size
  }
})

export type PartitionWorker = Effect.Success<ReturnType<typeof makePartitionWorker>>
