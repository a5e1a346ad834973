import { Clock, Config, Context, Duration, Effect, Layer, Schedule } from "effect"
import type { SessionTimeoutRecord } from "../domain/records.ts"
import { type LogEntry, type PartitionHandler, SignalLog } from "../log/signal-log.ts"
import { Metrics } from "../observability/metrics.ts"
import { stepSpan } from "../observability/tracing.ts"
import { DatabaseHealth } from "../store/database-health.ts"
import { Projections } from "../store/projections.ts"
import { Cluster } from "./cluster.ts"
import { foldSettings } from "./fold-settings.ts"
import { makePartitionWorker, type PartitionFailing, type PartitionWorker } from "./partition-worker.ts"
import { RuleCache } from "./rule-cache.ts"
import { ScopeTotals } from "./scope-totals.ts"
import { VerdictRegistry } from "./verdicts.ts"

/** One owned partition, as readiness reports it. */
export interface PartitionStatus {
  readonly partition: number
  readonly next_offset: number
  readonly failing?: PartitionFailing
  /** Users whose actor is in memory (the others' state is in its snapshot, loaded on their next record). */
  readonly actors: number
  /** Inactivity timers running: one per open session of this partition's users, in memory or not. */
  readonly timers: number
  /** Records folded and answered whose projections are not committed yet. */
  readonly uncommitted: number
}

/** How often due inactivity timers are looked for, and idle actors evicted. */
const sweepSchedule = Schedule.spaced("1 second")

/**
 * The processing side of the engine: the log's partition handler (one PartitionWorker per owned
 * partition, folding its batches and completing their verdicts in the VerdictRegistry) and the
 * timers (inactivity ticks, idle eviction). It meets the ingress only at the registry: it says
 * there which partitions it answers for, and answers them.
 */
export class Processor extends Context.Service<Processor, {
  /** The partitions this node owns, where each is, and those whose batch keeps failing. */
  readonly partitions: Effect.Effect<ReadonlyArray<PartitionStatus>>
  /**
   * Waits (at most `SETTLE_WAIT`) until the projections of every record this node folded so far
   * are committed: a read that follows a verdict of this node sees its signal.
   */
  readonly settled: Effect.Effect<void>
}>()("signal-engine/engine/Processor") {
  static readonly layer = Layer.effect(
    Processor,
    Effect.gen(function*() {
      const log = yield* SignalLog
      const idle = yield* Config.Duration("ACTOR_IDLE_TIMEOUT").pipe(Config.withDefault(Duration.minutes(10)))
      const settleWait = yield* Config.Duration("SETTLE_WAIT").pipe(Config.withDefault(Duration.seconds(5)))
      const workers = new Map<number, PartitionWorker>()
      const handler = yield* partitionHandler(workers)
      yield* Effect.forkScoped(Effect.scoped(Effect.andThen(log.run(handler), Effect.never)))
      yield* Effect.forkScoped(Effect.repeat(sweepTimers(workers, log, idle), sweepSchedule))

      const partitions = Effect.sync(() =>
        [...workers.values()].sort((a, b) => a.partition - b.partition).map((w): PartitionStatus => {
          const failing = w.failing()
          return {
            partition: w.partition,
            next_offset: w.nextOffset(),
            ...(failing ? { failing } : {}),
            actors: w.actorCount(),
            timers: w.timerCount(),
            uncommitted: w.uncommitted()
          }
        })
      )
      const settled = Effect.suspend(() => Effect.forEach([...workers.values()], (w) => w.settle, { concurrency: "unbounded", discard: true })).pipe(
        Effect.timeout(settleWait),
        Effect.ignore
      )
      return Processor.of({ partitions, settled })
    })
  )
}

/**
 * What the log calls as it assigns, feeds and revokes this node's partitions: a worker per
 * assigned partition, kept in `workers`; a batch's verdicts completed in the registry.
 */
const partitionHandler = Effect.fnUntraced(function*(workers: Map<number, PartitionWorker>) {
  const log = yield* SignalLog
  const verdicts = yield* VerdictRegistry
  // Verdicts are answered once folded; the projections follow, at most this many records behind per partition.
  const maxLag = yield* Config.Int("COMMIT_LAG_MAX_RECORDS").pipe(Config.withDefault(10_000))
  const cluster = yield* Cluster
  const rules = yield* RuleCache
  const shared = yield* ScopeTotals
  const settings = yield* foldSettings
  const metrics = yield* Metrics
  const database = yield* DatabaseHealth
  const context = yield* Effect.context<Projections>()
  const reread = rereadFrom(log)

  const assigned = (partition: number) =>
    makePartitionWorker({
      log: log.name,
      partition,
      timers: true,
      rules,
      shared,
      settings,
      metrics,
      database,
      writeBehind: { maxLag: Math.max(1, maxLag), reread: reread(partition), announceFirst: cluster.enabled }
    }).pipe(
      Effect.provideContext(context),
      Effect.tap(() => cluster.claim(log.name, partition)),
      Effect.map((worker) => {
        workers.set(partition, worker)
        verdicts.ownPartition(partition)
        return worker.nextOffset()
      }),
      Effect.tap((next) =>
        Effect.logInfo(`partition ${partition} of ${log.name} assigned; folding from offset ${next}`).pipe(
          Effect.annotateLogs({ partition, owned: [...workers.keys()].sort((a, b) => a - b).join(",") })
        )
      )
    )

  const stages = metrics.verdictStages
  const batch = (partition: number, entries: ReadonlyArray<LogEntry>) =>
    Effect.gen(function*() {
      const worker = workers.get(partition)
      if (!worker) return yield* Effect.die(`batch for partition ${partition}, which this node does not own`)
      const taken = performance.now()
      for (const e of entries) if (e.at !== undefined) stages.queue.observe((taken - e.at) / 1000)
      const done = yield* worker.process(entries, yield* Clock.currentTimeMillis).pipe(
        stepSpan("PartitionWorker.batch", {
          "signal_engine.log": log.name,
          "signal_engine.partition": partition,
          "signal_engine.first_offset": entries[0]?.offset ?? -1,
          "signal_engine.last_offset": entries[entries.length - 1]?.offset ?? -1,
          "signal_engine.records": entries.length
        })
      )
      yield* verdicts.complete(done.outcomes)
      const folded = (performance.now() - taken) / 1000
      for (let i = 0; i < entries.length; i++) stages.fold.observe(folded)
      // A drift the fold detected becomes a goal-drift signal of the user, like any other.
      if (done.drifts.length > 0) {
        yield* log.append(done.drifts).pipe(
          Effect.catchTag("LogUnavailable", (e) => Effect.logWarning("could not append goal-drift signals", e.message))
        )
      }
    })

  const revoked = (partition: number) =>
    Effect.andThen(
      Effect.suspend(() => {
        const worker = workers.get(partition)
        workers.delete(partition)
        verdicts.releasePartition(partition)
        // What it folded is committed before the partition is let go, so its next owner starts from there.
        return worker === undefined ? Effect.void : worker.close()
      }),
      cluster.release(log.name, partition)
    ).pipe(Effect.andThen(Effect.logInfo(`partition ${partition} of ${log.name} released`).pipe(Effect.annotateLogs({ partition }))))

  return { assigned, batch, revoked } satisfies PartitionHandler
})

/**
 * A partition's records in [from, until), read from the log: what a worker folded past the
 * offset another owner committed, to fold again (empty when the log cannot be read: the worker
 * then waits for the log to deliver them again).
 */
const rereadFrom = (log: SignalLog["Service"]) => (partition: number) => (from: number, until: number) =>
  Effect.gen(function*() {
    const entries: Array<LogEntry> = []
    yield* log.readPartition(partition, from, (batch) =>
      Effect.sync(() => {
        for (const e of batch) if (e.offset < until) entries.push(e)
      }))
    return entries as ReadonlyArray<LogEntry>
  }).pipe(
    Effect.catchTag("LogUnavailable", (e) =>
      Effect.as(Effect.logWarning(`partition ${partition}: could not read the log again`, e.message), [] as ReadonlyArray<LogEntry>))
  )

/** Inactivity timers: a due session becomes a tick record in its user's partition; idle actors are evicted. */
const sweepTimers = (workers: ReadonlyMap<number, PartitionWorker>, log: SignalLog["Service"], idle: Duration.Duration) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const due = [...workers.values()].flatMap((w) => {
      w.evictIdle(now, Duration.toMillis(idle))
      return w.takeDue(now).map((timer) => ({ worker: w, timer }))
    })
    if (due.length === 0) return
    const ts = new Date(now).toISOString()
    const ticks: Array<SessionTimeoutRecord> = due.map(({ timer }) => ({
      v: 1,
      kind: "session-timeout",
      org_id: timer.orgId,
      environment: timer.environment,
      user_id: timer.userId,
      ts,
      session_id: timer.sessionId,
      last_activity_at: timer.lastActivityAt
    }))
    yield* log.append(ticks).pipe(
      Effect.catchTag("LogUnavailable", (e) =>
        Effect.andThen(
          Effect.logWarning("could not append session timeout ticks; retrying", e.message),
          Effect.sync(() => due.forEach(({ worker, timer }) => worker.restore(timer)))
        ))
    )
  })
