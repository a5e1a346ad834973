import { type EngineFeature, planHasFeature } from "./plans.ts"
import type { LogRecord, SignalRecord } from "./records.ts"
import { addUsage, addUsageInto, type Crossing, type MutableUsage, noUsage, type Usage } from "./rule-evaluation.ts"
import { crossingId, judge, type RuleView, usageOf } from "./judge.ts"
import { parseScopeKey, type ScopeUsageRow } from "./scope-usage.ts"
import { eventIdFor, type EventRow, type GoalRow, type Position, type SessionRow } from "./projection-rows.ts"
import type { DriftDetected } from "./fold-result.ts"
import { fold } from "./user-fold.ts"
import type { FoldSettings, UserState } from "./user-state.ts"
import { type KnownEvent, type Outcome, retried, stored, type Verdict } from "./verdict.ts"
import { type Notice, type OutboxEvent, toOutboxEvent } from "./notices.ts"

/** A record at its place in the log, under its key (the user). */
export interface Entry extends Position {
  readonly key: string
  readonly record: LogRecord
}

/** What a batch is folded against: everything it reads besides its records and their users' states. */
export interface BatchContext {
  readonly partition: number
  readonly settings: FoldSettings
  /** The rules to judge signals by; without them (replay, notify off) nothing is judged. */
  readonly rules?: RuleView | undefined
  /** Whether notices (webhook events) are produced; replay re-folds what was notified already. */
  readonly notify: boolean
  /** Records before this instant (epoch ms) are folded into the state but write no rows. */
  readonly projectFrom?: number | undefined
  /** This partition's committed count of a shared scope, by scope key. */
  readonly committed: (key: string) => Usage | undefined
  /** The node's other partitions' (and nodes') count of a shared scope: added to this one's. */
  readonly others?: ((key: string) => Usage) | undefined
  /** Whether a budget level was reported by a batch committed before. */
  readonly reportedBefore: (crossingId: string) => boolean
  /** The shared-scope keys a signal counts in (a memo per user: the worker's, reused across batches). */
  readonly scopeKeys: (record: SignalRecord, project: string | null) => ReadonlyArray<string>
}

/** What a batch comes to: the rows to commit and, once they are, the answers and the new state. */
export interface BatchFold {
  /** The state of every user of the batch after it. */
  readonly states: ReadonlyMap<string, UserState>
  readonly sessions: ReadonlyArray<SessionRow>
  readonly events: ReadonlyArray<EventRow>
  readonly goals: ReadonlyArray<GoalRow>
  readonly notices: ReadonlyArray<OutboxEvent>
  /** A verdict per signal and an outcome per goal command, in log order. */
  readonly outcomes: ReadonlyArray<Outcome>
  /** Goal drifts detected, for the engine to append as signals (where the plan has the feature). */
  readonly drifts: ReadonlyArray<{ readonly record: SignalRecord; readonly drift: DriftDetected }>
  /** The shared scopes the batch counted in: their totals (committed + the batch's), by scope key. */
  readonly counts: ReadonlyMap<string, MutableUsage>
  /** Budget levels the batch reported (crossing ids). */
  readonly reported: ReadonlySet<string>
}

/**
 * The fold drives drift and anomalies for every org (they are state, and replay must not depend
 * on plans); what is acted on follows the plan stamped on the record. Records from before plans
 * were stamped act as before.
 */
const hasFeature = (record: LogRecord, feature: EngineFeature) => record.kind !== "signal" || record.plan === undefined || planHasFeature(record.plan, feature)

const planAllows = (record: LogRecord, n: Notice) => n.type !== "anomaly.detected" || hasFeature(record, "anomalies")

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

/**
 * Folds a batch of one partition's records, in offset order, each into its user's state; judges
 * each signal by the rules and the usage before it (the user's own, and the shared scopes' over
 * every partition); answers a retry of a keyed signal as its first copy was answered, counting
 * nothing again. Pure: what it reads is its arguments, so a batch folded again after a failed
 * commit comes to the same rows, and a partition refolded from its log to the same projections.
 *
 * `firsts` are the stored first copies of the batch's keyed signals (by event id); the batch's
 * own first copies are added as they are folded.
 */
export const foldBatch = (
  entries: ReadonlyArray<Entry>,
  initial: ReadonlyMap<string, UserState>,
  storedFirsts: ReadonlyMap<string, KnownEvent>,
  context: BatchContext
): BatchFold => {
  const states = new Map(initial)
  const firsts = new Map(storedFirsts)
  // The batch's shared-scope counts, over the committed ones: each is this batch's own object
  // (a copy on first touch), added to in place.
  const counts = new Map<string, MutableUsage>()
  const countOf = (key: string) => counts.get(key) ?? context.committed(key) ?? noUsage
  const shared = context.others === undefined ? countOf : (key: string) => addUsage(countOf(key), context.others!(key))
  const reported = new Set<string>()
  const report = (c: Crossing): boolean => {
    const id = crossingId(c)
    if (context.reportedBefore(id) || reported.has(id)) return true
    reported.add(id)
    return false
  }
  const rules = context.notify ? context.rules : undefined

  const sessions = new Map<string, SessionRow>()
  const events: Array<EventRow> = []
  const goals = new Map<string, GoalRow>()
  const notices: Array<OutboxEvent> = []
  const outcomes: Array<Outcome> = []
  const drifts: Array<{ readonly record: SignalRecord; readonly drift: DriftDetected }> = []

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
    const result = fold(before, record, entry, context.settings)
    states.set(entry.key, result.state)
    // The signal's project as its event has it (its own, else its session's): project rules
    // and project budgets follow what the events are listed under.
    const project = record.kind === "signal"
      ? result.events.find((e) => e.signal_id === record.signal_id)?.project_id ?? text(record.metadata.project_id)
      : null
    const judged = record.kind === "signal" && result.sessionId !== undefined && rules
      ? judge(rules.rulesFor(record.org_id, record.environment), before, record, project, result.sessionId, shared, report)
      : undefined
    if (record.kind === "signal") {
      const usage = usageOf(record)
      for (const key of context.scopeKeys(record, project)) {
        const counted = counts.get(key)
        if (counted === undefined) counts.set(key, addUsage(context.committed(key) ?? noUsage, usage))
        else addUsageInto(counted, usage)
      }
    }
    if (context.projectFrom !== undefined && Date.parse(record.ts) < context.projectFrom) continue
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
    if (context.notify) { for (const n of result.notices) if (planAllows(record, n)) notices.push(toOutboxEvent(n)) }
    if (record.kind === "signal" && result.sessionId !== undefined) {
      const verdict: Verdict = judged?.verdict ?? { ok: true, signal_id: record.signal_id, session_id: result.sessionId }
      if (judged) notices.push(...judged.notices.map(toOutboxEvent))
      if (result.drift && hasFeature(record, "goal_drift")) {
        drifts.push({ record, drift: result.drift })
        // Told once, to the prompt that completed the streak (a retry of it is not told again: its event keeps the rule's verdict only).
        const { goal_id, goal, since, off_goal_prompts, evidence } = result.drift
        outcomes.push({ ...verdict, drift: { goal_id, goal, since, off_goal_prompts, prompts: evidence.map((e) => e.prompt) } })
      } else {
        outcomes.push(verdict)
      }
    }
    if (result.goalOutcome) outcomes.push(result.goalOutcome)
  }
  return {
    states,
    sessions: [...sessions.values()],
    events,
    goals: [...goals.values()],
    notices,
    outcomes,
    drifts,
    counts,
    reported
  }
}

/**
 * The scope-usage rows a batch's counts write, and of them those a budget watches: the other
 * nodes are told of these at once (the rest they read when a rule starts watching).
 */
export const scopeUsageRows = (
  counts: ReadonlyMap<string, Usage>,
  partition: number,
  watched: RuleView["watched"] | undefined
) => {
  const rows: Array<ScopeUsageRow> = []
  const watch: Array<ReturnType<typeof parseScopeKey>> = []
  const announced: Array<ScopeUsageRow> = []
  for (const [key, usage] of counts) {
    const scope = parseScopeKey(key)
    const row = { ...scope, partition, ...usage }
    rows.push(row)
    if (watched?.(scope.org_id, scope.environment, scope.scope, scope.scope_id)) {
      watch.push(scope)
      announced.push(row)
    }
  }
  return { rows, watch, announced }
}
