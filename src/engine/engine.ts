import { Clock, Config, Context, Deferred, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import type { GoalOutcome } from "../domain/goals.ts"
import type { GoalRecord, SessionTimeoutRecord, SignalRecord } from "../domain/records.ts"
import { type LogEntry, LogUnavailable, type PartitionHandler, SignalLog } from "../log/signal-log.ts"
import { statelessBlock } from "../domain/rule-evaluation.ts"
import { signalFacts } from "../domain/judge.ts"
import { makePartitionWorker, type PartitionWorker } from "./partition-worker.ts"
import { type AcceptanceVerdict, NotAppended, type PartitionStatus, type PendingReason, type Submitted } from "./engine-answers.ts"
import { Cluster } from "./cluster.ts"
import { RuleCache } from "./rule-cache.ts"
import { ScopeTotals } from "./scope-totals.ts"
import { foldSettings } from "./fold-settings.ts"
import type { Outcome } from "../domain/verdict.ts"
import { VerdictRegistry } from "./verdicts.ts"
import { childrenByKey, Metrics, secondsSince } from "../observability/metrics.ts"
import { stepSpan } from "../observability/tracing.ts"
import { DatabaseHealth } from "../store/database-health.ts"

/** The internal route a node answers verdicts of its partitions on (for the proxy path). */
export const internalVerdictPath = (signalId: string) => `/internal/v1/verdicts/${encodeURIComponent(signalId)}`
export const clusterSecretHeader = "x-cluster-secret"

export { type AcceptanceVerdict, NotAppended, type PartitionStatus, type PendingReason, pendingMessages, type Submitted } from "./engine-answers.ts"

/** How often due inactivity timers are looked for, and idle actors evicted. */
const sweepSchedule = Schedule.spaced("1 second")
/** With the database down, how long a signal's wait goes on for a verdict already on its way. */
const DATABASE_DOWN_GRACE = "200 millis"

/**
 * The stream processor of this node: consumes the partitions the log assigns it, one
 * PartitionWorker each, and answers ingestion with the verdict of the owning actor.
 */
export class Engine extends Context.Service<Engine, {
  readonly submit: (record: SignalRecord) => Effect.Effect<Submitted, NotAppended>
  /** Appends the records in one append, in order; answers one Submitted per record, in order. */
  readonly submitMany: (records: ReadonlyArray<SignalRecord>) => Effect.Effect<ReadonlyArray<Submitted>, NotAppended>
  /** Appends a goal command and waits for the user's actor to decide it (none when the wait ran out). */
  readonly submitGoal: (record: GoalRecord) => Effect.Effect<Option.Option<GoalOutcome>, LogUnavailable>
  /** The partitions this node owns, where each is, and those whose batch keeps failing. */
  readonly partitions: Effect.Effect<ReadonlyArray<PartitionStatus>>
  /**
   * Waits (at most `SETTLE_WAIT`) until the projections of every record this node folded so far
   * are committed: a read that follows a verdict of this node sees its signal.
   */
  readonly settled: Effect.Effect<void>
}>()("signal-engine/engine/Engine") {
  static readonly layer = Layer.effect(
    Engine,
    Effect.gen(function*() {
      const log = yield* SignalLog
      const verdicts = yield* VerdictRegistry
      const wait = yield* Config.Duration("INGEST_WAIT").pipe(Config.withDefault(Duration.seconds(2)))
      const appendWait = yield* Config.Duration("APPEND_WAIT").pipe(Config.withDefault(Duration.seconds(2)))
      const idle = yield* Config.Duration("ACTOR_IDLE_TIMEOUT").pipe(Config.withDefault(Duration.minutes(10)))
      // Verdicts are answered once folded; the projections follow, at most this many records behind per partition.
      const maxLag = yield* Config.Int("COMMIT_LAG_MAX_RECORDS").pipe(Config.withDefault(10_000))
      const settleWait = yield* Config.Duration("SETTLE_WAIT").pipe(Config.withDefault(Duration.seconds(5)))
      const cluster = yield* Cluster
      const rules = yield* RuleCache
      const shared = yield* ScopeTotals
      const settings = yield* foldSettings
      const context = yield* Effect.context<import("../store/projections.ts").Projections>()
      const workers = new Map<number, PartitionWorker>()
      const metrics = yield* Metrics
      const database = yield* DatabaseHealth

      /**
       * A partition's records in [from, until), read from the log: what a worker folded past the
       * offset another owner committed, to fold again (empty when the log cannot be read: the
       * worker then waits for the log to deliver them again).
       */
      const reread = (partition: number) => (from: number, until: number) =>
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

      const handler: PartitionHandler = {
        assigned: (partition) =>
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
              return worker.nextOffset()
            }),
            Effect.tap((next) =>
              Effect.logInfo(`partition ${partition} of ${log.name} assigned; folding from offset ${next}`).pipe(
                Effect.annotateLogs({ partition, owned: [...workers.keys()].sort((a, b) => a - b).join(",") })
              )
            )
          ),
        batch: (partition, entries) =>
          Effect.gen(function*() {
            const worker = workers.get(partition)
            if (!worker) return yield* Effect.die(`batch for partition ${partition}, which this node does not own`)
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
            // A drift the fold detected becomes a goal-drift signal of the user, like any other.
            if (done.drifts.length > 0) {
              yield* log.append(done.drifts).pipe(
                Effect.catchTag("LogUnavailable", (e) => Effect.logWarning("could not append goal-drift signals", e.message))
              )
            }
          }),
        revoked: (partition) =>
          Effect.andThen(
            Effect.suspend(() => {
              const worker = workers.get(partition)
              workers.delete(partition)
              // What it folded is committed before the partition is let go, so its next owner starts from there.
              return worker === undefined ? Effect.void : worker.close()
            }),
            cluster.release(log.name, partition)
          ).pipe(Effect.andThen(Effect.logInfo(`partition ${partition} of ${log.name} released`).pipe(Effect.annotateLogs({ partition }))))
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

    /**
       * The proxy path: the verdict of a signal whose partition another node owns, asked of that
       * node. Never fails: an owner that cannot answer leaves the local wait to time out, and
       * notes why in `why`; or, for a signal already blocked at acceptance (`blocked`), ends the
       * wait at once: only its session id was still to come.
       */
      const remoteOutcome = (partition: number, id: string, why: { reason: PendingReason }, blocked: boolean): Effect.Effect<Outcome | undefined> => {
        const giveUp: Effect.Effect<undefined> = blocked ? Effect.undefined : Effect.never
        return Effect.gen(function*() {
          const owner = yield* cluster.ownerOf(log.name, partition)
          if (Option.isNone(owner) || owner.value.nodeId === cluster.nodeId || Option.isNone(cluster.secret)) {
            // No owner, or this node recorded as the owner of a partition it no longer holds.
            if (Option.isNone(owner) || owner.value.nodeId === cluster.nodeId) why.reason = "no_owner"
            return yield* giveUp
          }
          const secret = Redacted.value(cluster.secret.value)
          const response = yield* Effect.tryPromise((signal) =>
            fetch(`${owner.value.url}${internalVerdictPath(id)}?wait_ms=${Duration.toMillis(wait)}`, {
              headers: { [clusterSecretHeader]: secret },
              signal
            }).then(async (r) => (r.status === 200 ? (await r.json()) as Outcome : undefined))
          ).pipe(Effect.tapError(() => Effect.sync(() => void (why.reason = "forward_failed"))))
          return response ?? (yield* giveUp)
        }).pipe(Effect.catchCause(() => giveUp))
      }

      /**
       * The outcome of an appended record, or why there is none at the deadline: from the local
       * worker, or the owner's when another node owns the record's partition.
       */
      const outcomeOf = (
        userId: string,
        id: string,
        deferred: Deferred.Deferred<Outcome | undefined>,
        blocked: boolean
      ): Effect.Effect<Outcome | PendingReason> => {
        const partition = log.partitionFor(userId)
        const why: { reason: PendingReason } = { reason: "timeout" }
        const local = !cluster.enabled || workers.has(partition)
        const answered = local ? Deferred.await(deferred) : Effect.raceFirst(Deferred.await(deferred), remoteOutcome(partition, id, why, blocked))
        return Effect.map(
          // The database out of reach: the fold that would answer waits for it, so answer now
          // (after a moment for a verdict already on its way) rather than at the deadline.
          Effect.raceFirst(answered, Effect.andThen(database.down, Effect.as(Effect.sleep(DATABASE_DOWN_GRACE), "database_unavailable" as const))),
          // At the deadline: a partition that no worker of this node holds and no other node
          // answers for has no owner (without a cluster, this node is meant to own them all).
          (outcome) => outcome ?? (workers.has(partition) ? "timeout" : local ? "no_owner" : why.reason)
        )
      }

      /**
       * Appends the records in one call (in order; failing once APPEND_WAIT is out), then waits
       * for their outcomes, all within one INGEST_WAIT from the start; none for those not
       * processed by then (they are durable).
       */
      const appendAndWait = Effect.fnUntraced(function*(
        records: ReadonlyArray<SignalRecord | GoalRecord>,
        idOf: (record: SignalRecord | GoalRecord) => string,
        blocked: ReadonlyArray<boolean> = []
      ) {
        const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(wait)
        // One wait per record, each answered by its own record's outcome (copies of a keyed
        // signal share an id, and queue); the waits of records never appended are taken out.
        const deferreds = yield* Effect.forEach(records, (record) => verdicts.register(idOf(record), deadline))
        // The append is bounded too (APPEND_WAIT): a client is answered well inside the adapters'
        // 3 s whatever the log does; an append not confirmed by then goes on, and the answer says
        // its outcome is unknown (sent again under its idempotency key, it is a duplicate).
        yield* log.append(records).pipe(
          Effect.timeoutOption(appendWait),
          Effect.flatMap(Option.match({
            onNone: () => Effect.fail(new LogUnavailable({ message: `the log did not confirm the append within APPEND_WAIT (${Duration.format(appendWait)}); the records may still be written` })),
            onSome: Effect.succeed
          })),
          Effect.onError(() => Effect.forEach(records, (record, i) => verdicts.cancel(idOf(record), deferreds[i]!), { discard: true }))
        )
        const answers: Array<Outcome | PendingReason> = []
        for (let i = 0; i < records.length; i++) {
          const record = records[i]!
          answers.push(yield* outcomeOf(record.user_id, idOf(record), deferreds[i]!, blocked[i] === true))
        }
        return answers
      })

      const signalId = (record: SignalRecord | GoalRecord) => (record.kind === "signal" ? record.signal_id : record.command_id)

      /**
       * The rules that need no per-user state (model_filter, org_policy; DESIGN decision 8) are
       * judged here, before the append, from the signal alone: a block is answered whether or not
       * the owning actor answers in time (its partition unowned in a restart or rebalance, the
       * owner unreachable or slow). The record is appended all the same (its usage happened) and
       * the actor, judging the same rules, comes to the same block. Where the actor answered
       * allowed but this node's rules block (the nodes' rules differ for a moment), the block stands.
       */
      const atAcceptance = (record: SignalRecord): AcceptanceVerdict | undefined => {
        const rule = statelessBlock(
          rules.rulesFor(record.org_id, record.environment),
          signalFacts(record, typeof record.metadata.project_id === "string" ? record.metadata.project_id : null)
        )
        if (rule === undefined) return undefined
        const message = rule.action_config.message
        return { ok: false, signal_id: record.signal_id, action: "block", rule_id: rule.id, ...(typeof message === "string" ? { message } : {}) }
      }

      const accepted = childrenByKey<ReturnType<typeof metrics.signalsAccepted.labels>>()
      const acceptedAs = (type: string, action: string) =>
        accepted(`${type}\0${action}`, () => metrics.signalsAccepted.labels({ type, action }))

      /** Counts what each accepted signal was answered, and how long its answer took. */
      const measure = (records: ReadonlyArray<SignalRecord>, submitted: ReadonlyArray<Submitted>, started: number) => {
        const seconds = secondsSince(started)
        for (let i = 0; i < submitted.length; i++) {
          const s = submitted[i]!
          acceptedAs(records[i]!.type, s._tag === "Pending" ? "pending" : s.verdict.action ?? "allow").inc()
          metrics.verdictLatency.observe(seconds)
        }
        return submitted
      }

      const submitMany = Effect.fnUntraced(function*(records: ReadonlyArray<SignalRecord>) {
        const judged = records.map(atAcceptance)
        const started = performance.now()
        const outcomes = yield* appendAndWait(records, signalId, judged.map((j) => j !== undefined)).pipe(
          Effect.mapError((e) => new NotAppended({ message: e.message, notWritten: e.notWritten === true, judged }))
        )
        return measure(records, outcomes.map((outcome, i): Submitted => {
          const block = judged[i]
          if (typeof outcome !== "string" && "signal_id" in outcome) {
            return block === undefined || !outcome.ok || outcome.duplicate === true
              ? { _tag: "Processed", verdict: outcome }
              : { _tag: "Judged", verdict: { ...block, session_id: outcome.session_id } }
          }
          return block === undefined
            ? { _tag: "Pending", signal_id: records[i]!.signal_id, reason: typeof outcome === "string" ? outcome : "timeout" }
            : { _tag: "Judged", verdict: block }
        }), started)
      })

      const submitGoal = Effect.fnUntraced(function*(record: GoalRecord) {
        const [outcome] = yield* appendAndWait([record], signalId)
        return typeof outcome === "string" || "signal_id" in outcome! ? Option.none() : Option.some(outcome!)
      })

      const submit = (record: SignalRecord) => Effect.map(submitMany([record]), (answers) => answers[0]!)

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

      const settled = Effect.suspend(() =>
        Effect.forEach([...workers.values()], (w) => w.settle, { concurrency: "unbounded", discard: true })
      ).pipe(Effect.timeout(settleWait), Effect.ignore)

      return Engine.of({ submit, submitMany, submitGoal, partitions, settled })
    })
  )
}
