import { Clock, Config, Context, Deferred, Duration, Effect, Layer, Option, Schedule } from "effect"
import type { SessionTimeoutRecord, SignalRecord } from "../domain/records.ts"
import { type LogUnavailable, type PartitionHandler, SignalLog } from "../log/signal-log.ts"
import { makePartitionWorker, type PartitionWorker } from "./partition-worker.ts"
import { type Verdict, VerdictRegistry } from "./verdicts.ts"

export type Submitted =
  | { readonly _tag: "Processed"; readonly verdict: Verdict }
  /** Durable in the log, not yet processed within the wait. */
  | { readonly _tag: "Pending"; readonly signal_id: string }

/** How often due inactivity timers are looked for, and idle actors evicted. */
const sweepSchedule = Schedule.spaced("1 second")

/**
 * The stream processor of this node: consumes the partitions the log assigns it, one
 * PartitionWorker each, and answers ingestion with the verdict of the owning actor.
 */
export class Engine extends Context.Service<Engine, {
  readonly submit: (record: SignalRecord) => Effect.Effect<Submitted, LogUnavailable>
  readonly owned: Effect.Effect<ReadonlyArray<number>>
}>()("signal-engine/engine/Engine") {
  static readonly layer = Layer.effect(
    Engine,
    Effect.gen(function*() {
      const log = yield* SignalLog
      const verdicts = yield* VerdictRegistry
      const wait = yield* Config.Duration("INGEST_WAIT").pipe(Config.withDefault(Duration.seconds(2)))
      const idle = yield* Config.Duration("ACTOR_IDLE_TIMEOUT").pipe(Config.withDefault(Duration.minutes(10)))
      const context = yield* Effect.context<import("../store/projections.ts").Projections>()
      const workers = new Map<number, PartitionWorker>()

      const handler: PartitionHandler = {
        assigned: (partition) =>
          makePartitionWorker({ log: log.name, partition, timers: true }).pipe(
            Effect.provideContext(context),
            Effect.map((worker) => {
              workers.set(partition, worker)
              return worker.nextOffset()
            })
          ),
        batch: (partition, entries) =>
          Effect.gen(function*() {
            const worker = workers.get(partition)
            if (!worker) return yield* Effect.die(`batch for partition ${partition}, which this node does not own`)
            const done = yield* worker.process(entries, yield* Clock.currentTimeMillis)
            yield* verdicts.complete(done)
          }),
        revoked: (partition) => Effect.sync(() => void workers.delete(partition))
      }

      yield* Effect.forkScoped(Effect.scoped(Effect.andThen(log.run(handler), Effect.never)))

      // Inactivity timers: a due session becomes a tick record in its user's partition.
      const sweep = Effect.gen(function*() {
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
      yield* Effect.forkScoped(Effect.repeat(sweep, sweepSchedule))

      const submit = Effect.fn("Engine.submit")(function*(record: SignalRecord) {
        const deferred = yield* verdicts.register(record.signal_id)
        yield* log.append([record]).pipe(Effect.tapError(() => verdicts.forget(record.signal_id)))
        const verdict = yield* Deferred.await(deferred).pipe(Effect.timeoutOption(wait))
        if (Option.isSome(verdict)) return { _tag: "Processed", verdict: verdict.value } satisfies Submitted
        yield* verdicts.forget(record.signal_id)
        return { _tag: "Pending", signal_id: record.signal_id } satisfies Submitted
      })

      return Engine.of({ submit, owned: Effect.sync(() => [...workers.keys()].sort((a, b) => a - b)) })
    })
  )
}
