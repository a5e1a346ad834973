import { Duration } from "effect"
import { type Entry, foldBatch, scopeUsageRows } from "../../src/domain/batch-fold.ts"
import { type BudgetStatus, standingOf, type UserUsage } from "../../src/domain/budgets.ts"
import type { Environment } from "../../src/domain/environments.ts"
import type { GoalOutcome, GoalStatus } from "../../src/domain/goals.ts"
import { makeId } from "../../src/domain/ids.ts"
import { type RuleView, signalFacts } from "../../src/domain/judge.ts"
import { validateOrgSettings } from "../../src/domain/org-settings.ts"
import type { Plan } from "../../src/domain/plans.ts"
import { bundledDatabase, memoizedRates, type PriceTable, priceSignal } from "../../src/domain/prices.ts"
import { eventIdFor, type EventRow, type GoalRow, type SessionRow } from "../../src/domain/projection-rows.ts"
import type { GoalRecord, LogRecord, SessionTimeoutRecord, SignalRecord } from "../../src/domain/records.ts"
import { addUsage, evaluationOrder, localDate, noUsage, statelessBlock, type Usage } from "../../src/domain/rule-evaluation.ts"
import { decodeCondition, type Rule, semanticProblems } from "../../src/domain/rules.ts"
import {
  announcedRows,
  announcementsOf,
  keyOfRow,
  makeScopeKeys,
  type ScopeUsageRow,
  type SharedScope,
  windowKeyOf
} from "../../src/domain/scope-usage.ts"
import type { SignalType } from "../../src/domain/signals.ts"
import { timeoutDue } from "../../src/domain/user-fold.ts"
import { defaultFoldSettings, emptyUserState, type FoldSettings, usageIn, type UserState } from "../../src/domain/user-state.ts"
import type { KnownEvent, Outcome, Verdict } from "../../src/domain/verdict.ts"
import type { OutboxEvent, WebhookEventType } from "../../src/domain/notices.ts"
import { driftSignal } from "../../src/engine/drift-signal.ts"
import { driftMethod } from "../../src/domain/drift.ts"
import type { Timer } from "../../src/engine/partition-worker-options.ts"
import { makeTimerIndex } from "../../src/engine/timer-index.ts"
import { toSignalRecord } from "../../src/http/engine/signals-records.ts"
import { partitionForKey } from "../../src/log/murmur2.ts"

/**
 * The engine core in one process, without a database, a log or a clock: signals are accepted as
 * the ingest route accepts them (`toSignalRecord`: stamped with the org's settings, the user's
 * teams and the price of their model; judged at acceptance by the stateless rules), appended to a
 * log of `partitions` partitions keyed by user (murmur2, as Kafka and PgLog place them), and
 * folded batch by batch as each partition's worker folds them (`foldBatch` with the same context:
 * the partition's committed counts, the node's other partitions', the levels reported before, the
 * first copies of keyed signals). The rows a batch writes are kept as the projections keep them
 * (sessions and goals upserted, events and outbox rows written once), and the answer to each
 * signal is the engine's (src/engine/engine.ts `submitMany`).
 *
 * Records are not decoded by the API's schema: the fold is fed what a log may hold (older
 * producers included). Time is data: it starts at `start` and moves with `advance`, which fires the inactivity timers
 * that fall due on the way (as the engine's sweep does every second) as session-timeout records.
 * Goal drifts the fold detects are appended as goal-drift signals, as the engine appends them.
 */

/** The org every user of the harness belongs to, with the settings stamped on its signals. */
export interface OrgSettings {
  readonly id: string
  readonly environment: Environment
  readonly plan: Plan
  readonly time_zone: string
  /** Seconds (the spec's `session_timeout`). */
  readonly session_timeout: number
}

export interface HarnessOptions {
  readonly org?: Partial<OrgSettings>
  /** The users and the teams they are in (a user not listed is in none). */
  readonly teams?: Readonly<Record<string, ReadonlyArray<string>>>
  readonly rules?: ReadonlyArray<Rule>
  /** MODEL_PRICES: USD per million tokens, over the bundled price database. */
  readonly prices?: PriceTable
  readonly partitions?: number
  /**
   * Nodes the partitions are spread over (partition p on node p mod nodes). A node reads its own
   * partitions' counts live and the others' as their commits announce them (NOTIFY), and reloads
   * the watched scopes' stored rows when the rules change, as ScopeTotals does.
   */
  readonly nodes?: number
  /** The first instant (ISO 8601). */
  readonly start?: string
  readonly settings?: FoldSettings
  /** MAX_METADATA_BYTES (default 16,384): a signal with more metadata is refused at acceptance. */
  readonly maxMetadataBytes?: number
}

/**
 * What an adapter sends, flattened: the signal's type, adapter and session id (defaults
 * `post-tool`, `claude-code`, `cs-1`), its idempotency key, and its metadata (every other field).
 */
export interface Send {
  readonly type?: SignalType
  readonly adapter?: string
  readonly session_id?: string
  readonly idempotency_key?: string
  readonly [metadata: string]: unknown
}

/** What POST /signals answers (ok is false exactly when the signal is blocked). */
export type Answer = Omit<Verdict, "session_id"> & { readonly session_id?: string }

export type GoalCommand =
  | { readonly op: "create"; readonly description: string; readonly adapter?: string }
  | { readonly op: "update"; readonly goal_id: string; readonly status?: GoalStatus; readonly description?: string }

/** The projections, as the write-behind commits them. */
interface Store {
  readonly sessions: Map<string, SessionRow>
  readonly events: Map<string, EventRow>
  readonly notices: Map<string, OutboxEvent>
  readonly goals: Map<string, GoalRow>
  readonly scopeUsage: Map<string, ScopeUsageRow>
}

const rowKey = (row: ScopeUsageRow) => JSON.stringify([row.org_id, row.environment, row.scope, row.scope_id, row.window_key, row.partition])

const newStore = (): Store => ({ sessions: new Map(), events: new Map(), notices: new Map(), goals: new Map(), scopeUsage: new Map() })

/** One partition's worker: its actors, counts, reported levels, timers and scope-key memo. */
interface Worker {
  readonly partition: number
  readonly node: number
  readonly actors: Map<string, UserState>
  readonly committed: Map<string, Usage>
  readonly reported: Set<string>
  readonly timers: ReturnType<typeof makeTimerIndex<Timer>>
  readonly scopeKeys: ReturnType<typeof makeScopeKeys>
}

const newWorker = (partition: number, node: number): Worker => ({
  partition,
  node,
  actors: new Map(),
  committed: new Map(),
  reported: new Set(),
  timers: makeTimerIndex<Timer>(),
  scopeKeys: makeScopeKeys()
})

const database = await bundledDatabase()

let ruleSeq = 0

/**
 * A rule as the management API stores it: an org-wide warn budget unless told otherwise, created
 * one second after the previous one (so ties in priority go to the one made first).
 */
export const rule = (over: Partial<Rule> & Pick<Rule, "type" | "condition">): Rule => {
  const n = ++ruleSeq
  const created = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString()
  return {
    id: `rule_${n}`,
    name: `rule ${n}`,
    enabled: true,
    scope: "org",
    scope_id: "org_1",
    priority: 100,
    action: "warn",
    action_config: {},
    created_at: created,
    updated_at: created,
    ...over
  }
}

/**
 * What the management API answers a rule with, before it looks up its scope: the condition's shape
 * for its type (400), then the problems with its values (422); none for a rule it takes.
 */
export const ruleProblems = (
  r: Pick<Rule, "type" | "action" | "action_config" | "name"> & { readonly condition: unknown }
): ReadonlyArray<string> => {
  const decoded = decodeCondition(r.type, r.condition)
  return "error" in decoded ? [decoded.error] : semanticProblems({ ...r, condition: decoded.ok })
}

const iso = (ms: number) => new Date(ms).toISOString()

/** The instant a calendar date starts at in a time zone (00:00 local). */
const localMidnight = (date: string, timeZone: string): number => {
  const utc = Date.parse(`${date}T00:00:00.000Z`)
  const format = new Intl.DateTimeFormat("en-CA", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit"
  })
  const offsetAt = (t: number) => {
    const p = Object.fromEntries(format.formatToParts(new Date(t)).map((x) => [x.type, x.value]))
    return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second)) - t
  }
  // Twice: the offset at the first guess may differ from the offset at midnight (a DST change).
  return utc - offsetAt(utc - offsetAt(utc))
}

const nextDate = (date: string, months: number, days: number) => {
  const d = new Date(`${date}T00:00:00.000Z`)
  d.setUTCMonth(d.getUTCMonth() + months, d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

export const foldHarness = (options: HarnessOptions = {}) => {
  let org: OrgSettings = {
    id: "org_1",
    environment: "live",
    plan: "business",
    time_zone: "UTC",
    session_timeout: 1800,
    ...options.org
  }
  const teams = new Map<string, ReadonlyArray<string>>(Object.entries(options.teams ?? {}))
  let rules: ReadonlyArray<Rule> = options.rules ?? []
  const settings = options.settings ?? defaultFoldSettings
  const partitions = options.partitions ?? 4
  const nodes = options.nodes ?? 1
  /** What each node heard of the partitions other nodes own, by node, partition and scope key. */
  const heard = Array.from({ length: nodes }, () => new Map<number, Map<string, Usage>>())
  /** Of two counts of one partition, the larger is the newer (they only grow within a window). */
  const hear = (node: number, partition: number, key: string, usage: Usage) => {
    const known = heard[node]!.get(partition) ?? new Map<string, Usage>()
    const before = known.get(key)
    known.set(
      key,
      before === undefined ? usage : {
        cost_usd: Math.max(before.cost_usd, usage.cost_usd),
        tokens_in: Math.max(before.tokens_in, usage.tokens_in),
        tokens_out: Math.max(before.tokens_out, usage.tokens_out)
      }
    )
    heard[node]!.set(partition, known)
  }
  const lookup = memoizedRates(database, options.prices ?? {})
  const pricing = { overrides: options.prices ?? {}, price: (input: Parameters<typeof priceSignal>[1]) => priceSignal(lookup, input) }
  let now = Date.parse(options.start ?? "2026-03-02T09:00:00.000Z")

  /** The rule cache's view: enabled rules in evaluation order, and the shared scopes budgets watch. */
  const ruleView: RuleView = {
    rulesFor: (orgId, environment) => orgId === org.id && environment === org.environment ? evaluationOrder(rules.filter((r) => r.enabled)) : [],
    watched: (orgId, environment, scope, scopeId) =>
      orgId === org.id && environment === org.environment &&
      rules.some((r) => r.enabled && r.type === "budget" && r.scope === scope && r.scope_id === scopeId)
  }

  const log: Array<Array<Entry>> = Array.from({ length: partitions }, () => [])

  /** Folds a batch of one partition as its worker does, and commits what it wrote to `store`. */
  const foldInto = (worker: Worker, workers: ReadonlyArray<Worker>, store: Store, entries: ReadonlyArray<Entry>, live: boolean) => {
    const users = [...new Set(entries.map((e) => e.key))]
    const states = new Map(users.map((u) => [u, worker.actors.get(u) ?? emptyUserState]))
    const firsts = new Map<string, KnownEvent>()
    for (const { record } of entries) {
      if (record.kind !== "signal" || record.idempotency_key === undefined) continue
      const e = store.events.get(eventIdFor(record.signal_id))
      if (e) firsts.set(e.id, { id: e.id, session_id: e.session_id, log_partition: e.log_partition, log_offset: e.log_offset, verdict: e.verdict ?? null })
    }
    const folded = foldBatch(entries, states, firsts, {
      partition: worker.partition,
      settings,
      rules: live ? ruleView : undefined,
      notify: live,
      committed: (key) => worker.committed.get(key),
      others: (key) =>
        workers.reduce((sum, w) => {
          if (w === worker) return sum
          const count = w.node === worker.node ? w.committed.get(key) : heard[worker.node]!.get(w.partition)?.get(key)
          return addUsage(sum, count ?? noUsage)
        }, noUsage),
      reportedBefore: (id) => worker.reported.has(id),
      scopeKeys: worker.scopeKeys.keysOf
    })
    for (const [u, state] of folded.states) {
      worker.actors.set(u, state)
      if (live) {
        worker.timers.set(
          u,
          Object.values(state.open).map((s) => ({
            userId: u,
            orgId: s.org_id,
            environment: s.environment,
            sessionId: s.id,
            lastActivityAt: s.last_activity_at,
            due: timeoutDue(s)
          }))
        )
      }
    }
    for (const [key, usage] of folded.counts) worker.committed.set(key, usage)
    for (const id of folded.reported) worker.reported.add(id)
    for (const s of folded.sessions) store.sessions.set(s.id, s)
    for (const e of folded.events) if (!store.events.has(e.id)) store.events.set(e.id, e)
    for (const n of folded.notices) if (!store.notices.has(n.id)) store.notices.set(n.id, n)
    for (const g of folded.goals) store.goals.set(g.id, g)
    const scopes = scopeUsageRows(folded.counts, worker.partition, ruleView.watched)
    for (const row of scopes.rows) store.scopeUsage.set(rowKey(row), row)
    // The commit announces the watched scopes' counts; every other node hears them.
    if (live) {
      for (const payload of announcementsOf(scopes.announced)) {
        for (const row of announcedRows(payload)) {
          for (let n = 0; n < nodes; n++) if (n !== worker.node) hear(n, row.partition, keyOfRow(row), row)
        }
      }
    }
    return folded
  }

  const workers = Array.from({ length: partitions }, (_, p) => newWorker(p, p % nodes))
  const store = newStore()

  /**
   * Appends records (in order, each to its user's partition) and has each partition fold what it
   * got as one batch, in partition order; then the goal drifts detected, the same way. Answers the
   * outcomes by id (copies of a keyed signal share one: they queue).
   */
  const append = (records: ReadonlyArray<LogRecord>): Map<string, Array<Outcome>> => {
    const byPartition = new Map<number, Array<Entry>>()
    for (const record of records) {
      const partition = partitionForKey(record.user_id, partitions)
      const entry: Entry = { partition, offset: log[partition]!.length, key: record.user_id, record }
      log[partition]!.push(entry)
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), entry])
    }
    const outcomes = new Map<string, Array<Outcome>>()
    const drifts: Array<SignalRecord> = []
    for (const [partition, entries] of [...byPartition].sort(([a], [b]) => a - b)) {
      const folded = foldInto(workers[partition]!, workers, store, entries, true)
      for (const o of folded.outcomes) {
        const id = "signal_id" in o ? o.signal_id : o.command_id
        outcomes.set(id, [...(outcomes.get(id) ?? []), o])
      }
      drifts.push(...folded.drifts.map(({ record, drift }) => driftSignal(record, drift, now)))
    }
    if (drifts.length > 0) append(drifts)
    return outcomes
  }

  const principalOf = (user: string) => ({
    keyId: "lic_harness",
    orgId: org.id,
    userId: user,
    plan: org.plan,
    environment: org.environment,
    sessionTimeoutS: org.session_timeout,
    timeZone: org.time_zone,
    teamIds: teams.get(user) ?? []
  })

  /** The record the ingest route makes of what a user sent (throws on what it refuses). */
  const accept = (user: string, send: Send): SignalRecord => {
    const { type = "post-tool", adapter = "claude-code", session_id = "cs-1", idempotency_key, ...metadata } = send
    const result = toSignalRecord(
      { type, adapter, session_id, metadata, ...(idempotency_key !== undefined ? { idempotency_key } : {}) },
      { principal: principalOf(user), pricing, maxMetadataBytes: options.maxMetadataBytes ?? 16_384, now }
    )
    if (result._tag === "Failure") throw new Error(`${result.failure.code}: ${result.failure.error}`)
    return result.success
  }

  /** The block the accepting node answers from the stateless rules, before the actor judges. */
  const atAcceptance = (record: SignalRecord) => {
    const blocking = statelessBlock(
      ruleView.rulesFor(record.org_id, record.environment),
      signalFacts(record, typeof record.metadata.project_id === "string" ? record.metadata.project_id : null)
    )
    if (blocking === undefined) return undefined
    const message = blocking.action_config.message
    return { ok: false, signal_id: record.signal_id, action: "block" as const, rule_id: blocking.id, ...(typeof message === "string" ? { message } : {}) }
  }

  /** Several signals sent at once (one append: each partition folds its share as one batch). */
  const sendAll = (sends: ReadonlyArray<readonly [user: string, send: Send]>): ReadonlyArray<Answer> => {
    const records = sends.map(([user, send]) => accept(user, send))
    const judged = records.map(atAcceptance)
    const outcomes = append(records)
    return records.map((record, i) => {
      const outcome = outcomes.get(record.signal_id)!.shift() as Verdict
      const block = judged[i]
      return block === undefined || !outcome.ok || outcome.duplicate === true ? outcome : { ...block, session_id: outcome.session_id }
    })
  }

  /** The earliest inactivity timer running on any partition. */
  const nextDue = (): number | undefined => {
    let due: number | undefined
    for (const w of workers) {
      for (const state of w.actors.values()) {
        for (const s of Object.values(state.open)) if (due === undefined || timeoutDue(s) < due) due = timeoutDue(s)
      }
    }
    return due
  }

  /** Moves time on to `until`; each timer falls due at the next whole second's sweep, as a tick record. */
  const advanceTo = (until: number) => {
    if (until < now) throw new Error(`time goes forward only: ${iso(until)} is before ${iso(now)}`)
    for (;;) {
      const due = nextDue()
      const sweep = due === undefined ? undefined : Math.max(now, Math.ceil(due / 1000) * 1000)
      if (sweep === undefined || sweep > until) break
      now = sweep
      const ticks: Array<SessionTimeoutRecord> = workers.flatMap((w) =>
        w.timers.takeDue(now).map((t): SessionTimeoutRecord => ({
          v: 1,
          kind: "session-timeout",
          org_id: t.orgId,
          environment: t.environment,
          user_id: t.userId,
          ts: iso(now),
          session_id: t.sessionId,
          last_activity_at: t.lastActivityAt
        }))
      )
      append(ticks)
    }
    now = until
  }

  const sorted = <A>(rows: Iterable<A>, by: (a: A) => string) => [...rows].sort((a, b) => by(a).localeCompare(by(b)))
  /** Sessions by start (then as first written); events by time, then place in the log. */
  const bySession = (rows: Iterable<SessionRow>) => sorted(rows, (s) => s.started_at)
  const byEvent = (rows: Iterable<EventRow>) =>
    [...rows].sort((a, b) => a.ts.localeCompare(b.ts) || a.log_partition - b.log_partition || a.log_offset - b.log_offset)

  /** The current daily and monthly window keys and bounds, as the budgets page reads them. */
  const windows = () => {
    const day = localDate(iso(now), org.time_zone)
    const month = `${day.slice(0, 7)}-01`
    return {
      daily: { key: windowKeyOf("daily", day), start: iso(localMidnight(day, org.time_zone)), end: iso(localMidnight(nextDate(day, 0, 1), org.time_zone)) },
      monthly: {
        key: windowKeyOf("monthly", day.slice(0, 7)),
        start: iso(localMidnight(month, org.time_zone)),
        end: iso(localMidnight(nextDate(month, 1, 0), org.time_zone))
      }
    }
  }

  /** A shared scope's usage in a window key, summed over the partitions' stored rows as SQL's sum() adds them. */
  const scopeUsage = (s: Store, scope: SharedScope, scopeId: string, windowKey: string): Usage => {
    const sum = { cost_usd: 0, tokens_in: 0, tokens_out: 0 }
    for (const row of s.scopeUsage.values()) {
      if (row.org_id === org.id && row.environment === org.environment && row.scope === scope && row.scope_id === scopeId && row.window_key === windowKey) {
        sum.cost_usd += row.cost_usd
        sum.tokens_in += row.tokens_in
        sum.tokens_out += row.tokens_out
      }
    }
    return sum
  }

  const stateOf = (user: string) => workers[partitionForKey(user, partitions)]!.actors.get(user) ?? emptyUserState

  const users = () => [...new Set([...teams.keys(), ...workers.flatMap((w) => [...w.actors.keys()])])].sort()

  return {
    /** The current instant (ISO 8601). */
    now: () => iso(now),
    /** Moves time on; inactivity timers that fall due on the way fire. */
    advance: (by: Duration.Input) => advanceTo(now + Duration.toMillis(by)),
    /** Moves time on to an instant (ISO 8601). */
    advanceTo: (instant: string) => advanceTo(Date.parse(instant)),
    /** A signal sent by a user now, and what the engine answers. */
    signal: (user: string, send: Send = {}): Answer => sendAll([[user, send]])[0]!,
    sendAll,
    /** A goal command of a user (POST /goals, PATCH /goals/:id), and what the user's actor decided. */
    goal: (user: string, command: GoalCommand): GoalOutcome => {
      const record: GoalRecord = {
        v: 1,
        kind: "goal",
        org_id: org.id,
        environment: org.environment,
        user_id: user,
        ts: iso(now),
        command_id: makeId("gcmd", now),
        // Stamped as the goals route stamps it (goals-handlers.ts).
        drift_method: driftMethod,
        ...(command.op === "create"
          ? {
            op: "create",
            goal_id: makeId("goal", now),
            description: command.description,
            ...(command.adapter !== undefined ? { adapter: command.adapter } : {})
          }
          : command)
      }
      return append([record]).get(record.command_id)![0] as GoalOutcome
    },
    /**
     * Replaces the rules in force (a change through the management API, in force at once); every
     * node reads the stored counts of the scopes budgets now watch, as ScopeTotals reloads them.
     */
    setRules: (next: ReadonlyArray<Rule>) => {
      rules = next
      for (const row of store.scopeUsage.values()) {
        if (!ruleView.watched(row.org_id, row.environment, row.scope, row.scope_id)) continue
        for (let n = 0; n < nodes; n++) if (n !== row.partition % nodes) hear(n, row.partition, keyOfRow(row), row)
      }
    },
    /**
     * Changes the org's settings for the signals accepted from now on; the time zone and the
     * timeout are checked and stored as PATCH /org stores them (throws with the problems).
     */
    setOrg: (over: Partial<Omit<OrgSettings, "id" | "environment">>) => {
      const checked = validateOrgSettings({ time_zone: over.time_zone, session_timeout: over.session_timeout })
      if ("problems" in checked) throw new Error(checked.problems.join("; "))
      org = {
        ...org,
        ...over,
        ...(checked.ok.time_zone !== undefined ? { time_zone: checked.ok.time_zone } : {}),
        ...(checked.ok.session_timeout !== undefined ? { session_timeout: checked.ok.session_timeout } : {})
      }
    },
    /** Puts a user in these teams from now on. */
    setTeams: (user: string, ids: ReadonlyArray<string>) => void teams.set(user, ids),
    /** Every record appended, by partition, in offset order. */
    log: (): ReadonlyArray<ReadonlyArray<Entry>> => log,
    /** Session rows, oldest first (by start, then as first written). */
    sessions: (user?: string): ReadonlyArray<SessionRow> => bySession(store.sessions.values()).filter((s) => user === undefined || s.user_id === user),
    /** Event rows by time, then place in the log (a user's in the order their signals were accepted). */
    events: (user?: string): ReadonlyArray<EventRow> => byEvent(store.events.values()).filter((e) => user === undefined || e.user_id === user),
    /** Outbox rows (webhook events) in the order they were written, of one type if given. */
    notices: (type?: WebhookEventType): ReadonlyArray<OutboxEvent> => [...store.notices.values()].filter((n) => type === undefined || n.type === type),
    goals: (): ReadonlyArray<GoalRow> => [...store.goals.values()],
    /** A user's actor state. */
    state: stateOf,
    /** A shared scope's usage in the current daily (default) or monthly window, as stored. */
    spend: (scope: SharedScope, scopeId: string, window: "daily" | "monthly" = "daily"): Usage => scopeUsage(store, scope, scopeId, windows()[window].key),
    /** A user's own usage in the current daily (default) or monthly window. */
    userSpend: (user: string, window: "daily" | "monthly" = "daily"): Usage => usageIn(stateOf(user), org.environment, window, windows()[window].key.slice(2)),
    /** Where a budget or per-user limit stands now, as the budgets page shows it. */
    standing: (ruleId: string): BudgetStatus => {
      const r = rules.find((x) => x.id === ruleId)
      if (r === undefined || (r.type !== "budget" && r.type !== "user_limit")) throw new Error(`${ruleId} is no budget or limit`)
      const kind = (r.condition as { readonly window: "daily" | "monthly" }).window
      const window = windows()[kind]
      const own = (user: string): UserUsage => ({ user_id: user, usage: usageIn(stateOf(user), org.environment, kind, window.key.slice(2)) })
      const typed = { ...r, type: r.type }
      if (r.type === "budget") {
        return standingOf(typed, window, {
          scope: r.scope === "user" ? own(r.scope_id).usage : scopeUsage(store, r.scope as SharedScope, r.scope_id, window.key)
        })
      }
      const covered = r.scope === "user" ? [r.scope_id] : r.scope === "team" ? users().filter((u) => (teams.get(u) ?? []).includes(r.scope_id)) : users()
      return standingOf(typed, window, { users: covered.map(own).filter((u) => u.usage !== noUsage) })
    },
    /**
     * The log folded again from the start, as a replay does (no rules, no notices, no timers):
     * the sessions, events, goals, scope counts and actor states it comes to.
     */
    replay: () => {
      const again = Array.from({ length: partitions }, (_, p) => newWorker(p, 0))
      const s = newStore()
      for (const w of again) if (log[w.partition]!.length > 0) foldInto(w, again, s, log[w.partition]!, false)
      return {
        sessions: sorted(s.sessions.values(), (x) => `${x.started_at}${x.id}`),
        events: byEvent(s.events.values()),
        goals: [...s.goals.values()],
        scopeUsage: sorted(s.scopeUsage.values(), JSON.stringify),
        states: new Map(users().map((u) => [u, again[partitionForKey(u, partitions)]!.actors.get(u) ?? emptyUserState]))
      }
    },
    /** The live projections and states in the shape `replay` answers. */
    projections: () => ({
      sessions: sorted(store.sessions.values(), (x) => `${x.started_at}${x.id}`),
      events: byEvent(store.events.values()),
      goals: [...store.goals.values()],
      scopeUsage: sorted(store.scopeUsage.values(), JSON.stringify),
      states: new Map(users().map((u) => [u, stateOf(u)]))
    })
  }
}

export type FoldHarness = ReturnType<typeof foldHarness>
