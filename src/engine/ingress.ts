import { Clock, Config, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import type { GoalOutcome } from "../domain/goals.ts"
import { signalFacts } from "../domain/judge.ts"
import type { GoalRecord, SignalRecord } from "../domain/records.ts"
import { statelessBlock } from "../domain/rule-evaluation.ts"
import type { Outcome } from "../domain/verdict.ts"
import { LogUnavailable, SignalLog } from "../log/signal-log.ts"
import { childrenByKey, Metrics, secondsSince } from "../observability/metrics.ts"
import { RequestReceived } from "../observability/request-received.ts"
import { DatabaseHealth } from "../store/database-health.ts"
import { Cluster } from "./cluster.ts"
import { type AcceptanceVerdict, NotAppended, type PendingReason, type Submitted } from "./ingress-answers.ts"
import { askOwner } from "./owner-verdict.ts"
import { RuleCache } from "./rule-cache.ts"
import { VerdictRegistry } from "./verdicts.ts"

/** With the database down, how long a signal's wait goes on for a verdict already on its way. */
const DATABASE_DOWN_GRACE = "200 millis"

/**
 * The accepting side of the engine: judges the stateless rules at acceptance, appends to the log,
 * and waits in the VerdictRegistry for the verdict the Processor (this node's, or the owner's
 * asked over the cluster) completes there. The two meet only at the registry.
 */
export class Ingress extends Context.Service<Ingress, {
  readonly submit: (record: SignalRecord) => Effect.Effect<Submitted, NotAppended>
  /** Appends the records in one append, in order; answers one Submitted per record, in order. */
  readonly submitMany: (records: ReadonlyArray<SignalRecord>) => Effect.Effect<ReadonlyArray<Submitted>, NotAppended>
  /** Appends a goal command and waits for the user's actor to decide it (none when the wait ran out). */
  readonly submitGoal: (record: GoalRecord) => Effect.Effect<Option.Option<GoalOutcome>, LogUnavailable>
}>()("signal-engine/engine/Ingress") {
  static readonly layer = Layer.effect(
    Ingress,
    Effect.gen(function*() {
      const appendAndWait = yield* appendThenWait
      const rules = yield* RuleCache
      const metrics = yield* Metrics

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
        return { ok: false, signal_id: record.signal_id, action: rule.action, rule_id: rule.id, ...(typeof message === "string" ? { message } : {}) }
      }

      const accepted = childrenByKey<ReturnType<typeof metrics.signalsAccepted.labels>>()
      const acceptedAs = (type: string, action: string) => accepted(`${type}\0${action}`, () => metrics.signalsAccepted.labels({ type, action }))

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
        const received = yield* RequestReceived
        if (received !== undefined) { for (let i = 0; i < records.length; i++) metrics.verdictStages.admit.observe((started - received) / 1000) }
        const outcomes = yield* appendAndWait(records, judged.map((j) => j !== undefined)).pipe(
          Effect.mapError((e) => new NotAppended({ message: e.message, notWritten: e.notWritten === true, judged }))
        )
        return measure(records, outcomes.map((outcome, i) => answerOf(records[i]!, outcome, judged[i])), started)
      })

      const submitGoal = Effect.fnUntraced(function*(record: GoalRecord) {
        const [outcome] = yield* appendAndWait([record])
        return typeof outcome === "string" || "signal_id" in outcome! ? Option.none() : Option.some(outcome!)
      })

      const submit = (record: SignalRecord) => Effect.map(submitMany([record]), (answers) => answers[0]!)
      return Ingress.of({ submit, submitMany, submitGoal })
    })
  )
}

/**
 * What a signal is answered: the actor's verdict, or the block judged at acceptance (with the
 * session the actor gave it, where it answered allowed in time), or pending and why.
 */
const answerOf = (record: SignalRecord, outcome: Outcome | PendingReason, block: AcceptanceVerdict | undefined): Submitted => {
  if (typeof outcome !== "string" && "signal_id" in outcome) {
    return block === undefined || !outcome.ok || outcome.duplicate === true
      ? { _tag: "Processed", verdict: outcome }
      : { _tag: "Judged", verdict: { ...block, session_id: outcome.session_id } }
  }
  return block === undefined
    ? { _tag: "Pending", signal_id: record.signal_id, reason: typeof outcome === "string" ? outcome : "timeout" }
    : { _tag: "Judged", verdict: block }
}

const idOf = (record: SignalRecord | GoalRecord) => (record.kind === "signal" ? record.signal_id : record.command_id)

/**
 * Appends records in one call (in order; failing once APPEND_WAIT is out), then waits for their
 * outcomes, all within one INGEST_WAIT from the start; none for those not processed by then
 * (they are durable).
 */
const appendThenWait = Effect.gen(function*() {
  const log = yield* SignalLog
  const verdicts = yield* VerdictRegistry
  const cluster = yield* Cluster
  const database = yield* DatabaseHealth
  const wait = yield* Config.Duration("INGEST_WAIT").pipe(Config.withDefault(Duration.seconds(2)))
  const appendWait = yield* Config.Duration("APPEND_WAIT").pipe(Config.withDefault(Duration.seconds(2)))
  const fromOwner = askOwner(cluster, log.name, wait)
  const stages = (yield* Metrics).verdictStages

  /**
   * The outcome of an appended record, or why there is none at the deadline: from this node's
   * processor, or the owner's when another node owns the record's partition.
   */
  const outcomeOf = (userId: string, id: string, deferred: Deferred.Deferred<Outcome | undefined>, blocked: boolean) => {
    const partition = log.partitionFor(userId)
    const why: { reason: PendingReason } = { reason: "timeout" }
    const local = !cluster.enabled || verdicts.ownsPartition(partition)
    const answered = local ? Deferred.await(deferred) : Effect.raceFirst(Deferred.await(deferred), fromOwner(partition, id, why, blocked))
    return Effect.map(
      // The database out of reach: the fold that would answer waits for it, so answer now
      // (after a moment for a verdict already on its way) rather than at the deadline.
      Effect.raceFirst(answered, Effect.andThen(database.down, Effect.as(Effect.sleep(DATABASE_DOWN_GRACE), "database_unavailable" as const))),
      // At the deadline: a partition that this node does not answer for and no other node
      // answers for has no owner (without a cluster, this node is meant to own them all).
      (outcome): Outcome | PendingReason => outcome ?? (verdicts.ownsPartition(partition) ? "timeout" : local ? "no_owner" : why.reason)
    )
  }

  return Effect.fnUntraced(function*(records: ReadonlyArray<SignalRecord | GoalRecord>, blocked: ReadonlyArray<boolean> = []) {
    const deadline = (yield* Clock.currentTimeMillis) + Duration.toMillis(wait)
    // One wait per record, each answered by its own record's outcome (copies of a keyed
    // signal share an id, and queue); the waits of records never appended are taken out.
    const deferreds = yield* Effect.forEach(records, (record) => verdicts.register(idOf(record), deadline))
    const started = performance.now()
    // The append is bounded too (APPEND_WAIT): a client is answered well inside the adapters'
    // 3 s whatever the log does; an append not confirmed by then goes on, and the answer says
    // its outcome is unknown (sent again under its idempotency key, it is a duplicate).
    yield* log.append(records).pipe(
      Effect.timeoutOption(appendWait),
      Effect.flatMap(Option.match({
        onNone: () =>
          Effect.fail(
            new LogUnavailable({
              message: `the log did not confirm the append within APPEND_WAIT (${Duration.format(appendWait)}); the records may still be written`
            })
          ),
        onSome: Effect.succeed
      })),
      Effect.onError(() => Effect.forEach(records, (record, i) => verdicts.cancel(idOf(record), deferreds[i]!), { discard: true }))
    )
    const appended = performance.now()
    for (let i = 0; i < records.length; i++) stages.append.observe((appended - started) / 1000)
    const answers: Array<Outcome | PendingReason> = []
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!
      const outcome = yield* outcomeOf(record.user_id, idOf(record), deferreds[i]!, blocked[i] === true)
      answers.push(outcome)
      // From its verdict, or from the append's confirmation where the verdict came first (a
      // node's own append is folded as it is confirmed, before this request goes on).
      const completed = typeof outcome === "string" ? undefined : verdicts.completedAt(outcome)
      if (completed !== undefined) stages.answer.observe((performance.now() - Math.max(completed, appended)) / 1000)
    }
    return answers
  })
})
