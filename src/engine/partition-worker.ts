import { Clock, Duration, Effect, Schedule, Schema } from "effect"
import { foldBatch, scopeUsageRows } from "../domain/batch-fold.ts"
import type { Environment } from "../domain/environments.ts"
import { eventIdFor } from "../domain/projection-rows.ts"
import type { SignalRecord } from "../domain/records.ts"
import { announcementsOf, makeScopeKeys } from "../domain/scope-usage.ts"
import { timeoutDue } from "../domain/sessionizer.ts"
import { defaultFoldSettings, emptyUserState, type FoldSettings, type UserState } from "../domain/user-state.ts"
import type { KnownEvent, Outcome } from "../domain/verdict.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { Projections } from "../store/projections.ts"
import { type EngineMetrics, secondsSince } from "../observability/metrics.ts"
import { stepSpan } from "../observability/tracing.ts"
import { driftSignal } from "./drift-signal.ts"
import { makePartitionCounts } from "./partition-counts.ts"
import type { RuleCache } from "./rule-cache.ts"
import type { ScopeTotals } from "./scope-totals.ts"
import { makeTimerIndex } from "./timer-index.ts"

/** What a processed batch answers: a verdict per signal, an outcome per goal command. */
export interface Processed {
  readonly outcomes: ReadonlyArray<Outcome>
  /** goal-drift signals the fold detected, for the engine to append (live runs only). */
  readonly drifts: ReadonlyArray<SignalRecord>
}

const nothing: Processed = { outcomes: [], drifts: [] }

/** A session whose inactivity timer is running on this node. */
export interface Timer {
  readonly userId: string
  readonly orgId: string
  readonly environment: Environment
  readonly sessionId: string
  readonly lastActivityAt: string
  readonly due: number
}

interface Actor {
  state: UserState
  touchedAt: number
}

class BatchFailed extends Schema.TaggedError<BatchFailed>()("BatchFailed", { message: Schema.String }) {}

/** A partition whose batch keeps failing to commit (the worker retries it until it does). */
export interface PartitionFailing {
  readonly since: number
  readonly attempts: number
  readonly error: string
}

/** A batch whose transaction failed is redone from the persisted state, with backoff, until it commits. */
const batchRetry = Schedule.exponential("100 millis", 2).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(10))))
)

/**
 * The owner of one partition: its offset, the actors (per-user state) of its keys, and the
 * inactivity timers of their open sessions. Records are folded one at a time per user, in
 * offset order; a batch's projections, actor states and next offset commit together. Actors
 * live in memory while active, are loaded lazily from their snapshot, and are evicted when idle,
 * so memory follows active users, not all users.
 */
export const makePartitionWorker = Effect.fnUntraced(function*(options: {
  readonly log: string
  readonly partition: number
  /** Replay folds without starting timers (ticks are already in the log). */
  readonly timers: boolean
  /**
   * Whether folds enqueue webhook events (default true). Replay passes false: what it re-folds
   * was notified when it first happened.
   */
  readonly notify?: boolean | undefined
  /** The rules in force; without them (replay) no rule is evaluated. */
  readonly rules?: RuleCache["Service"] | undefined
  /**
   * The node's shared-scope totals: this partition's counts are read live from here by the
   * node's other partitions, and theirs (and other nodes') read from it. Without them (replay,
   * unit tests) a shared budget sees this partition's usage only.
   */
  readonly shared?: ScopeTotals["Service"] | undefined
  /**
   * Replay from a time: records before it (epoch ms) are folded, to rebuild the state as of that
   * time, but only what records at or after it change is written.
   */
  readonly projectFrom?: number | undefined
  readonly settings?: FoldSettings | undefined
  /**
   * Replay: actor states are written by `flush` (before evicting, and at the end), not with
   * every batch, since a replay interrupted half-way is run again from the start anyway.
   */
  readonly deferSnapshots?: boolean | undefined
  /** Where commit durations are recorded (the live engine's). */
  readonly metrics?: EngineMetrics | undefined
}) {
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
  const commitDuration = options.metrics?.commitDuration.labels({ partition: String(options.partition) })

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
   * The stored events of the batch's signals sent with an idempotency key (their ids derive from
   * the key, so a retry has its first copy's id), by event id; the batch adds its own first copies.
   */
  const firstCopies = (entries: ReadonlyArray<LogEntry>) =>
    Effect.gen(function*() {
      const ids = new Set<string>()
      for (const { record } of entries) {
        if (record.kind === "signal" && record.idempotency_key !== undefined) ids.add(eventIdFor(record.signal_id))
      }
      const found = ids.size === 0 ? [] : yield* projections.findEvents([...ids])
      return new Map<string, KnownEvent>(found.map((e) => [e.id, e]))
    })

  const attempt = (entries: ReadonlyArray<LogEntry>, now: number) =>
    Effect.gen(function*() {
      const users = [...new Set(entries.map((e) => e.key))]
      const loaded = yield* projections.loadActors(users.filter((u) => !actors.has(u)))
      const states = new Map<string, UserState>()
      for (const u of users) states.set(u, actors.get(u)?.state ?? loaded.get(u) ?? emptyUserState)
      const known = yield* firstCopies(entries)
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
        // In the fold's own step, with no yield between: from here until the commit, the node's
        // other partitions read the batch's counts, so a signal they fold after a crossing sees
        // it. A batch that failed keeps them visible until it is folded again (its records are
        // durable and will count); a fenced one drops them.
        counts.lend(folded.counts)
        return folded
      }).pipe(stepSpan("PartitionWorker.fold"))
      const scopes = scopeUsageRows(folded.counts, options.partition, options.rules?.watched)
      const nextOffset = entries[entries.length - 1]!.offset + 1
      const commitStarted = performance.now()
      const outcome = yield* projections.commitBatch({
        log: options.log,
        partition: options.partition,
        fromOffset: next,
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
      }).pipe(stepSpan("PartitionWorker.commit"))
      commitDuration?.observe(secondsSince(commitStarted))
      if (outcome._tag === "Fenced") {
        counts.drop()
        return "fenced" as const
      }
      // Only a committed batch moves the in-memory state forward.
      for (const [u, state] of folded.states) {
        actors.set(u, { state, touchedAt: now })
        trackTimers(u, state)
        if (options.deferSnapshots) unsaved.add(u)
      }
      counts.commit(folded.counts, folded.reported)
      options.shared?.note(outcome.others)
      next = nextOffset
      return {
        outcomes: folded.outcomes,
        drifts: options.timers ? folded.drifts.map(({ record, drift }) => driftSignal(record, drift, now)) : []
      } satisfies Processed
    }).pipe(Effect.catchCause((cause) => Effect.fail(new BatchFailed({ message: String(cause) }))))

  /**
   * Folds and commits a batch; answers the verdicts of its signals. Records before `next` are
   * skipped (redelivery). When the commit is fenced, another owner projected past `next`: the
   * worker forgets its actors, takes the stored offset, and goes on from there.
   */
  const process = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed> =>
    Effect.suspend(() => {
      const fresh = entries.filter((e) => e.offset >= next)
      if (fresh.length === 0) return Effect.succeed(nothing)
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
        Effect.retry(batchRetry),
        Effect.tap(() => Effect.sync(() => void (failing = undefined))),
        Effect.orDie,
        Effect.flatMap((outcome) =>
          outcome !== "fenced" ? Effect.succeed(outcome) : Effect.gen(function*() {
            yield* Effect.logWarning(`partition ${options.partition}: another owner moved past offset ${next}; resyncing`)
            actors.clear()
            scopeKeys.clear()
            yield* counts.reload
            next = yield* projections.nextOffset(options.log, options.partition)
            return yield* process(entries, now)
          }))
      )
    })

  /** While a batch is being retried: since when (ms), how many attempts failed, the last error. */
  let failing: PartitionFailing | undefined

  /** Timers due at `now`, removed from the set: the caller appends their ticks. */
  const takeDue = (now: number): ReadonlyArray<Timer> => timers.takeDue(now)

  /** A tick that could not be appended is retried on the next sweep. */
  const restore = (timer: Timer) =>
    timers.set(timer.userId, [...timers.get(timer.userId).filter((t) => t.sessionId !== timer.sessionId), timer])

  /** Drops actors idle for longer than `idleMs`; their state is in the snapshot table (unsaved ones stay). */
  const evictIdle = (now: number, idleMs: number) => {
    for (const [u, actor] of actors) {
      if (now - actor.touchedAt > idleMs && !unsaved.has(u)) {
        actors.delete(u)
        scopeKeys.forget(u)
      }
    }
  }

  /** Writes the states `deferSnapshots` held back, fenced on the offset like a batch. */
  const flush: Effect.Effect<void> = Effect.suspend(() => {
    if (unsaved.size === 0) return Effect.void
    const users = [...unsaved]
    return projections.commitBatch({
      log: options.log,
      partition: options.partition,
      fromOffset: next,
      nextOffset: next,
      sessions: [],
      events: [],
      notices: [],
      actors: users.map((u) => ({ user_id: u, partition: options.partition, state: actors.get(u)!.state })),
      goals: [],
      scopeUsage: [],
      watch: []
    }).pipe(Effect.flatMap((outcome) =>
      outcome._tag === "Fenced"
        ? Effect.die(`partition ${options.partition}: another owner moved the offset during a replay`)
        : Effect.sync(() => {
          for (const u of users) unsaved.delete(u)
        })
    ))
  })

  return {
    partition: options.partition,
    nextOffset: () => next,
    failing: () => failing,
    process,
    takeDue,
    restore,
    evictIdle,
    flush,
    actorCount: () => actors.size,
    /** Stops lending this partition's counts to the node's totals (revoked). */
    close: counts.close,
    timerCount: timers.size
  }
})

export type PartitionWorker = Effect.Success<ReturnType<typeof makePartitionWorker>>
