import { Clock, Duration, Effect, Schedule, Schema } from "effect"
import type { Environment } from "../domain/environments.ts"
import { makeId } from "../domain/ids.ts"
import { type EngineFeature, planHasFeature } from "../domain/plans.ts"
import type { LogRecord, SignalRecord } from "../domain/records.ts"
import { countsAsUsage } from "../domain/signals.ts"
import {
  addUsage,
  addUsageInto,
  type Crossing,
  evaluate,
  type MutableUsage,
  noUsage,
  type SignalFacts,
  type Usage
} from "../domain/rule-evaluation.ts"
import type { Rule } from "../domain/rules.ts"
import {
  announcementsOf,
  parseScopeKey,
  pruneWindows,
  makeScopeKeys,
  scopeKey,
  type ScopeUsageRow,
  type SharedScope,
  windowKeyOf
} from "../domain/scope-usage.ts"
import {
  defaultFoldSettings,
  type DriftDetected,
  emptyUserState,
  eventIdFor,
  fold,
  type FoldSettings,
  type EventRow,
  type GoalRow,
  type SessionRow,
  type StoredVerdict,
  timeoutDue,
  usageIn,
  type UserState
} from "../domain/sessionizer.ts"
import { type Notice, notice, type OutboxEvent, toOutboxEvent } from "../domain/webhooks.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { type ActorSnapshot, type KnownEvent, Projections } from "../store/projections.ts"
import type { RuleCache } from "./rule-cache.ts"
import type { ScopeTotals } from "./scope-totals.ts"
import { makeTimerIndex } from "./timer-index.ts"
import type { Outcome, Verdict } from "./verdicts.ts"

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
  /** This partition's exact counts of the shared scopes (team, org, project) by scope key. */
  const scopeCounts = new Map<string, Usage>()
  /**
   * The counts of the batch being folded, record by record (over `scopeCounts`), from its first
   * fold until it commits: the node's other partitions read them, so a signal they fold after a
   * crossing sees it. A batch that failed keeps them visible until it is folded again (its records
   * are durable and will count); a fenced one drops them.
   */
  let inFlight: Map<string, MutableUsage> | undefined
  let prunedAt = 0
  const loadScopeCounts = Effect.gen(function*() {
    const rows = yield* projections.loadScopeUsage(options.partition)
    scopeCounts.clear()
    for (const row of rows) {
      const { partition: _p, cost_usd, tokens_in, tokens_out, ...key } = row
      scopeCounts.set(scopeKey(key.org_id, key.environment, key.scope, key.scope_id, key.window_key), { cost_usd, tokens_in, tokens_out })
    }
    prunedAt = scopeCounts.size
  })
  yield* loadScopeCounts
  const detach = options.shared?.attach(options.partition, {
    get: (key) => inFlight?.get(key) ?? scopeCounts.get(key),
    entries: () => scopeCounts.entries()
  })

  /** Shared budget crossings this worker committed to the outbox (their event ids make a repeat a no-op anyway). */
  const reportedCrossings = new Set<string>()
  const crossingId = (c: Crossing) => `${budgetCause(c)}:${c.level}`

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
      const missing = users.filter((u) => !actors.has(u))
      const loaded = yield* projections.loadActors(missing)
      const states = new Map<string, UserState>()
      for (const u of users) states.set(u, actors.get(u)?.state ?? loaded.get(u) ?? emptyUserState)
      // The batch's shared-scope counts, over this partition's committed ones until it commits.
      // Each is this batch's own object (a copy on first touch), added to in place.
      const batchCounts = new Map<string, MutableUsage>()
      const countOf = (key: string) => batchCounts.get(key) ?? scopeCounts.get(key) ?? noUsage
      const batchReported = new Set<string>()
      const reported = (c: Crossing): boolean => {
        const id = crossingId(c)
        if (reportedCrossings.has(id) || batchReported.has(id)) return true
        batchReported.add(id)
        return false
      }

      const sessions = new Map<string, SessionRow>()
      const events: Array<EventRow> = []
      const goals = new Map<string, GoalRow>()
      const notices: Array<OutboxEvent> = []
      const outcomes: Array<Outcome> = []
      const drifts: Array<{ readonly record: SignalRecord; readonly drift: DriftDetected }> = []
      const firsts = yield* firstCopies(entries)
      // From here to the end of the loop nothing yields: the fold of the batch is one step on the
      // node, and every count it adds is seen by whatever any partition folds after it.
      inFlight = batchCounts
      for (const entry of entries) {
        const before = states.get(entry.key)!
        const record = entry.record
        const keyed = record.kind === "signal" && record.idempotency_key !== undefined
        if (keyed) {
          // A retry: the user sent this key before. Nothing is counted again; it is answered as the first copy was.
          const first = firsts.get(eventIdFor(record.signal_id))
          if (first !== undefined && (first.log_partition !== entry.partition || first.log_offset !== entry.offset)) {
            outcomes.push(retried(record.signal_id, first))
            continue
          }
        }
        const result = fold(before, record, entry, settings)
        states.set(entry.key, result.state)
        // The signal's project as its event has it (its own, else its session's): project rules
        // and project budgets follow what the events are listed under.
        const project = record.kind === "signal"
          ? result.events.find((e) => e.signal_id === record.signal_id)?.project_id ?? text(record.metadata.project_id)
          : null
        const judged = record.kind === "signal" && result.sessionId !== undefined && options.rules && notify
          ? judge(
            options.rules,
            before,
            record,
            project,
            result.sessionId,
            (key) => options.shared ? addUsage(countOf(key), options.shared.others(key, options.partition)) : countOf(key),
            reported
          )
          : undefined
        if (record.kind === "signal") {
          const usage = usageOf(record)
          for (const key of scopeKeys.keysOf(record, project)) {
            const counted = batchCounts.get(key)
            if (counted === undefined) batchCounts.set(key, addUsage(scopeCounts.get(key) ?? noUsage, usage))
            else addUsageInto(counted, usage)
          }
        }
        if (options.projectFrom !== undefined && Date.parse(record.ts) < options.projectFrom) continue
        for (const s of result.sessions) sessions.set(s.id, s)
        for (const g of result.goals ?? []) goals.set(g.id, g)
        if (keyed && record.kind === "signal" && result.sessionId !== undefined) {
          // The first copy of a keyed signal: its event keeps the verdict, for the retries.
          const verdict = stored(judged?.verdict)
          for (const e of result.events) events.push(e.signal_id === record.signal_id && verdict ? { ...e, verdict } : e)
          firsts.set(eventIdFor(record.signal_id), {
            id: eventIdFor(record.signal_id),
            session_id: result.sessionId,
            log_partition: entry.partition,
            log_offset: entry.offset,
            verdict: verdict ?? null
          })
        } else {
          events.push(...result.events)
        }
        if (notify) for (const n of result.notices) if (planAllows(record, n)) notices.push(toOutboxEvent(n))
        if (record.kind === "signal" && result.sessionId !== undefined) {
          outcomes.push(judged?.verdict ?? { ok: true, signal_id: record.signal_id, session_id: result.sessionId })
          if (judged) notices.push(...judged.notices.map(toOutboxEvent))
          if (result.drift && hasFeature(record, "goal_drift")) drifts.push({ record, drift: result.drift })
        }
        if (result.goalOutcome) outcomes.push(result.goalOutcome)
      }
      const snapshots: Array<ActorSnapshot> = options.deferSnapshots
        ? []
        : users.map((u) => ({ user_id: u, partition: options.partition, state: states.get(u)! }))
      const scopeUsage: Array<ScopeUsageRow> = []
      const watch: Array<ReturnType<typeof parseScopeKey>> = []
      const announced: Array<ScopeUsageRow> = []
      for (const [key, usage] of batchCounts) {
        const scope = parseScopeKey(key)
        const row = { ...scope, partition: options.partition, ...usage }
        scopeUsage.push(row)
        if (options.rules?.watched(scope.org_id, scope.environment, scope.scope, scope.scope_id)) {
          watch.push(scope)
          announced.push(row)
        }
      }
      const nextOffset = entries[entries.length - 1]!.offset + 1
      const outcome = yield* projections.commitBatch({
        log: options.log,
        partition: options.partition,
        fromOffset: next,
        nextOffset,
        sessions: [...sessions.values()],
        events,
        notices,
        actors: snapshots,
        goals: [...goals.values()],
        scopeUsage,
        watch,
        // The other nodes add this commit's counts as soon as it commits.
        announce: options.shared ? announcementsOf(announced) : undefined
      })
      if (outcome._tag === "Fenced") {
        inFlight = undefined
        return "fenced" as const
      }
      // Only a committed batch moves the in-memory state forward.
      for (const [u, state] of states) {
        actors.set(u, { state, touchedAt: now })
        trackTimers(u, state)
        if (options.deferSnapshots) unsaved.add(u)
      }
      for (const [key, usage] of batchCounts) scopeCounts.set(key, usage)
      inFlight = undefined
      if (reportedCrossings.size + batchReported.size > 100_000) reportedCrossings.clear()
      for (const id of batchReported) reportedCrossings.add(id)
      if (scopeCounts.size > 2 * prunedAt + 1000) {
        pruneWindows(scopeCounts)
        prunedAt = scopeCounts.size
      }
      options.shared?.note(outcome.others)
      next = nextOffset
      return {
        outcomes,
        drifts: options.timers ? drifts.map(({ record, drift }) => driftSignal(record, drift, now)) : []
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
            yield* loadScopeCounts
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
    close: () => detach?.(),
    timerCount: timers.size
  }
})

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)
const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0

const usageOf = (r: SignalRecord): Usage =>
  countsAsUsage(r.type)
    ? { cost_usd: r.cost.usd, tokens_in: count(r.metadata.tokens_in), tokens_out: count(r.metadata.tokens_out) }
    : noUsage

/** What the rules judge of a signal, its event's project being `projectId`. */
export const signalFacts = (r: SignalRecord, projectId: string | null): SignalFacts => {
  const m = r.metadata
  return {
    orgId: r.org_id,
    userId: r.user_id,
    teamIds: r.team_ids ?? [],
    projectId,
    model: text(m.model),
    modelKnown: r.cost.model_known,
    ts: r.ts,
    timeZone: r.time_zone,
    usage: usageOf(r),
    toolName: text(m.tool_name),
    command: text(m.command),
    mcpServer: text(m.mcp_server)
  }
}

/** What an event keeps of a verdict (nothing where no rule decided: a retry is then answered `ok`). */
const stored = (verdict: Verdict | undefined): StoredVerdict | undefined =>
  verdict === undefined || (verdict.ok && verdict.action === undefined)
    ? undefined
    : {
      ok: verdict.ok,
      ...(verdict.action !== undefined ? { action: verdict.action } : {}),
      ...(verdict.rule_id !== undefined ? { rule_id: verdict.rule_id } : {}),
      ...(verdict.message !== undefined ? { message: verdict.message } : {})
    }

/** The answer to a retry of a keyed signal: what its first copy got, in the session it was counted in. */
const retried = (signalId: string, first: KnownEvent): Verdict => ({
  ok: first.verdict?.ok ?? true,
  signal_id: signalId,
  session_id: first.session_id,
  ...(first.verdict?.action !== undefined ? { action: first.verdict.action } : {}),
  ...(first.verdict?.rule_id !== undefined ? { rule_id: first.verdict.rule_id } : {}),
  ...(first.verdict?.message !== undefined ? { message: first.verdict.message } : {}),
  duplicate: true
})

/**
 * The goal-drift signal the engine appends for a user whose off-goal streak reached the
 * configured length: in the session of the prompt that completed it, stamped now.
 */
const driftSignal = ({ idempotency_key: _key, ...r }: SignalRecord, drift: DriftDetected, now: number): SignalRecord => ({
  ...r,
  ts: new Date(now).toISOString(),
  signal_id: makeId("sig", now),
  type: "goal-drift",
  metadata: {
    goal_id: drift.goal_id,
    score: drift.score,
    off_goal_prompts: drift.off_goal_prompts,
    prompt_signal_id: drift.signal_id,
    source: "engine"
  },
  cost: { usd: 0, estimated: false, model_known: r.cost.model_known }
})

/**
 * The verdict on one signal, from the rules in force and the user's usage before it, and the
 * notices its firings and threshold crossings produce (ids per firing, and per rule, scope and
 * window for crossings, so each is recorded once).
 */
/**
 * The fold derives drift and anomalies for every org (they are state, and replay must not depend
 * on plans); the worker acts on them only where the plan stamped on the record has the feature.
 * Records from before plans were stamped act as before.
 */
const hasFeature = (record: LogRecord, feature: EngineFeature) =>
  record.kind !== "signal" || record.plan === undefined || planHasFeature(record.plan, feature)

const planAllows = (record: LogRecord, n: Notice) => n.type !== "anomaly.detected" || hasFeature(record, "anomalies")

const isShared = (rule: Rule) => rule.type === "budget" && rule.scope !== "user"

const judge = (
  rules: RuleCache["Service"],
  before: UserState,
  r: SignalRecord,
  projectId: string | null,
  sessionId: string,
  sharedUsage: (key: string) => Usage,
  /** Whether this worker reported a budget level already (and notes it if not). */
  reported: (crossing: Crossing) => boolean
) => {
  const facts = signalFacts(r, projectId)
  const evaluation = evaluate(rules.rulesFor(r.org_id, r.environment), facts, (rule, key) => {
    const window = (rule.condition as { readonly window: "daily" | "monthly" }).window
    return isShared(rule)
      ? sharedUsage(scopeKey(r.org_id, r.environment, rule.scope as SharedScope, rule.scope_id, windowKeyOf(window, key)))
      : usageIn(before, r.environment, window, key)
  })
  const at = { org_id: r.org_id, environment: r.environment, ts: r.ts }
  const notices: Array<Notice> = [
    ...evaluation.firings.map((f) =>
      notice("rule.triggered", `${f.rule.id}:${r.signal_id}`, at, {
        rule_id: f.rule.id,
        rule_name: f.rule.name,
        action: f.action,
        user_id: r.user_id,
        model: facts.model,
        session_id: sessionId,
        event_id: eventIdFor(r.signal_id)
      })),
    // Every level the counter is at and this worker has not reported yet: crossed by this signal,
    // by another partition's (shared scopes), or before the rule was created, enabled or lowered.
    // The event id (rule, scope, window, threshold) keeps each one once.
    ...evaluation.reached.filter((c) => !reported(c)).map((c) => {
      const condition = c.rule.condition as { readonly window: string; readonly metric: string }
      return notice(c.level === "warning" ? "budget.warning" : "budget.exceeded", budgetCause(c), at, {
        rule_id: c.rule.id,
        rule_name: c.rule.name,
        scope: c.rule.type === "budget" ? c.rule.scope : "user",
        scope_id: c.scopeId,
        threshold: c.threshold,
        // Costs are summed to the nano-dollar elsewhere; so is what the event says.
        current: condition.metric === "cost_usd" ? Math.round(c.current * 1e9) / 1e9 : c.current,
        window: condition.window,
        metric: condition.metric
      })
    })
  ]
  const decisive = evaluation.decisive
  const message = decisive?.rule.action_config.message
  const verdict: Verdict = {
    ok: evaluation.ok,
    signal_id: r.signal_id,
    session_id: sessionId,
    ...(decisive ? { action: decisive.action, rule_id: decisive.rule.id } : {}),
    ...(decisive && typeof message === "string" ? { message } : {})
  }
  return { verdict, notices }
}

/**
 * What a budget event is about: a rule's threshold in one scope and window. The threshold is part
 * of it, so a threshold raised (or lowered) after its levels were reported reports the new
 * one's levels when the counter reaches them; one set back to an earlier value reports nothing twice.
 */
const budgetCause = (c: Crossing) => `${c.rule.id}:${c.scopeId}:${c.window}:${c.threshold}`

export type PartitionWorker = Effect.Success<ReturnType<typeof makePartitionWorker>>
