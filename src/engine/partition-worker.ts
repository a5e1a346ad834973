import { Duration, Effect, Schedule, Schema } from "effect"
import type { Environment } from "../domain/environments.ts"
import type { SignalRecord } from "../domain/records.ts"
import { evaluate, type SignalFacts } from "../domain/rule-evaluation.ts"
import type { Rule } from "../domain/rules.ts"
import {
  emptyUserState,
  eventIdFor,
  fold,
  type EventRow,
  type SessionRow,
  timeoutDue,
  usageIn,
  type UserState
} from "../domain/sessionizer.ts"
import { type Notice, notice, type OutboxEvent, toOutboxEvent } from "../domain/webhooks.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { type ActorSnapshot, Projections } from "../store/projections.ts"
import type { RuleCache } from "./rule-cache.ts"
import type { Verdict } from "./verdicts.ts"

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
   * Replay from a time: records before it (epoch ms) are folded, to rebuild the state as of that
   * time, but only what records at or after it change is written.
   */
  readonly projectFrom?: number | undefined
}) {
  const projections = yield* Projections
  const notify = options.notify ?? true
  const actors = new Map<string, Actor>()
  const timers = new Map<string, Timer>()
  let next = yield* projections.nextOffset(options.log, options.partition)

  const trackTimers = (userId: string, state: UserState) => {
    if (!options.timers) return
    for (const [sessionId, timer] of timers) if (timer.userId === userId) timers.delete(sessionId)
    for (const session of Object.values(state.open)) {
      timers.set(session.id, {
        userId,
        orgId: session.org_id,
        environment: session.environment,
        sessionId: session.id,
        lastActivityAt: session.last_activity_at,
        due: timeoutDue(session)
      })
    }
  }

  if (options.timers) {
    for (const snapshot of yield* projections.actorsWithOpenSessions(options.partition)) {
      trackTimers(snapshot.user_id, snapshot.state)
    }
  }

  const attempt = (entries: ReadonlyArray<LogEntry>, now: number) =>
    Effect.gen(function*() {
      const users = [...new Set(entries.map((e) => e.key))]
      const missing = users.filter((u) => !actors.has(u))
      const loaded = yield* projections.loadActors(missing)
      const states = new Map<string, UserState>()
      for (const u of users) states.set(u, actors.get(u)?.state ?? loaded.get(u) ?? emptyUserState)

      const sessions = new Map<string, SessionRow>()
      const events: Array<EventRow> = []
      const notices: Array<OutboxEvent> = []
      const verdicts: Array<Verdict> = []
      for (const entry of entries) {
        const before = states.get(entry.key)!
        const result = fold(before, entry.record, entry)
        states.set(entry.key, result.state)
        if (options.projectFrom !== undefined && Date.parse(entry.record.ts) < options.projectFrom) continue
        for (const s of result.sessions) sessions.set(s.id, s)
        events.push(...result.events)
        if (notify) for (const n of result.notices) notices.push(toOutboxEvent(n))
        if (entry.record.kind === "signal" && result.sessionId !== undefined) {
          const judged = options.rules && notify ? judge(options.rules, before, entry.record, result.sessionId) : undefined
          verdicts.push(judged?.verdict ?? { ok: true, signal_id: entry.record.signal_id, session_id: result.sessionId })
          if (judged) notices.push(...judged.notices.map(toOutboxEvent))
        }
      }
      const snapshots: Array<ActorSnapshot> = users.map((u) => ({ user_id: u, partition: options.partition, state: states.get(u)! }))
      const nextOffset = entries[entries.length - 1]!.offset + 1
      const outcome = yield* projections.commitBatch({
        log: options.log,
        partition: options.partition,
        fromOffset: next,
        nextOffset,
        sessions: [...sessions.values()],
        events,
        notices,
        actors: snapshots
      })
      if (outcome === "fenced") return "fenced" as const
      // Only a committed batch moves the in-memory state forward.
      for (const [u, state] of states) {
        actors.set(u, { state, touchedAt: now })
        trackTimers(u, state)
      }
      next = nextOffset
      return verdicts
    }).pipe(Effect.catchCause((cause) => Effect.fail(new BatchFailed({ message: String(cause) }))))

  /**
   * Folds and commits a batch; answers the verdicts of its signals. Records before `next` are
   * skipped (redelivery). When the commit is fenced, another owner projected past `next`: the
   * worker forgets its actors, takes the stored offset, and goes on from there.
   */
  const process = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<ReadonlyArray<Verdict>> =>
    Effect.suspend(() => {
      const fresh = entries.filter((e) => e.offset >= next)
      if (fresh.length === 0) return Effect.succeed([])
      return attempt(fresh, now).pipe(
        Effect.tapError((e) => Effect.logError(`partition ${options.partition}: batch failed, retrying`, e.message)),
        Effect.retry(batchRetry),
        Effect.orDie,
        Effect.flatMap((outcome) =>
          outcome !== "fenced" ? Effect.succeed(outcome) : Effect.gen(function*() {
            yield* Effect.logWarning(`partition ${options.partition}: another owner moved past offset ${next}; resyncing`)
            actors.clear()
            next = yield* projections.nextOffset(options.log, options.partition)
            return yield* process(entries, now)
          }))
      )
    })

  /** Timers due at `now`, removed from the set: the caller appends their ticks. */
  const takeDue = (now: number): ReadonlyArray<Timer> => {
    const due: Array<Timer> = []
    for (const [id, timer] of timers) {
      if (timer.due <= now) {
        due.push(timer)
        timers.delete(id)
      }
    }
    return due
  }

  /** A tick that could not be appended is retried on the next sweep. */
  const restore = (timer: Timer) => void timers.set(timer.sessionId, timer)

  /** Drops actors idle for longer than `idleMs`; their state is in the snapshot table. */
  const evictIdle = (now: number, idleMs: number) => {
    for (const [u, actor] of actors) if (now - actor.touchedAt > idleMs) actors.delete(u)
  }

  return {
    partition: options.partition,
    nextOffset: () => next,
    process,
    takeDue,
    restore,
    evictIdle,
    actorCount: () => actors.size,
    timerCount: () => timers.size
  }
})

/** Budgets over a team, org or project need usage summed across partitions; they are not enforced yet. */
const enforceable = (rule: Rule) => !(rule.type === "budget" && rule.scope !== "user")

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)
const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0

/**
 * The verdict on one signal, from the rules in force and the user's usage before it, and the
 * notices its firings and threshold crossings produce (ids per firing, and per rule, scope and
 * window for crossings, so each is recorded once).
 */
const judge = (rules: RuleCache["Service"], before: UserState, r: SignalRecord, sessionId: string) => {
  const m = r.metadata
  const facts: SignalFacts = {
    orgId: r.org_id,
    userId: r.user_id,
    teamIds: rules.teamsOf(r.user_id),
    projectId: text(m.project_id),
    model: text(m.model),
    modelKnown: r.cost.model_known,
    ts: r.ts,
    usage: { cost_usd: r.cost.usd, tokens_in: count(m.tokens_in), tokens_out: count(m.tokens_out) }
  }
  const evaluation = evaluate(
    rules.rulesFor(r.org_id, r.environment).filter(enforceable),
    facts,
    (rule, key) => usageIn(before, r.environment, (rule.condition as { readonly window: "daily" | "monthly" }).window, key)
  )
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
    ...evaluation.crossings.map((c) => {
      const condition = c.rule.condition as { readonly window: string; readonly metric: string }
      return notice(c.level === "warning" ? "budget.warning" : "budget.exceeded", `${c.rule.id}:${c.scopeId}:${c.window}`, at, {
        rule_id: c.rule.id,
        rule_name: c.rule.name,
        scope: c.rule.type === "budget" ? c.rule.scope : "user",
        scope_id: c.scopeId,
        threshold: c.threshold,
        current: c.current,
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

export type PartitionWorker = Effect.Success<ReturnType<typeof makePartitionWorker>>
