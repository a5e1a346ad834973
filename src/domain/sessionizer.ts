import type { Environment } from "./environments.ts"
import type { LogRecord, SessionTimeoutRecord, SignalRecord } from "./records.ts"
import { addUsage, noUsage, type Usage, windowKey } from "./rule-evaluation.ts"
import { type Notice, notice } from "./webhooks.ts"

/**
 * The per-user fold: state × record → state, plus the projection rows the record changes.
 * Pure and deterministic: it reads nothing but its inputs (record timestamps, never a clock),
 * so replaying a log yields exactly the projections the live run wrote.
 *
 * A session is a window of activity of one user with one adapter, in one environment. It starts
 * with the first signal, or with the first signal after an inactivity timeout or an explicit
 * close; it ends on `session-end` (ended_at = that signal) or by timeout (ended_at = its last
 * activity), whichever comes first.
 */
export interface OpenSession {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly adapter: string
  readonly client_session_id: string
  readonly project_id: string | null
  readonly started_at: string
  readonly last_activity_at: string
  readonly timeout_s: number
  readonly tokens_in: number
  readonly tokens_out: number
  readonly cost_usd: number
  readonly signal_count: number
  readonly error_count: number
  /** Model names in first-seen order, with how many signals used each. */
  readonly model_counts: ReadonlyArray<readonly [string, number]>
}

export interface UserState {
  /** Open sessions by `<environment>:<adapter>`. */
  readonly open: Readonly<Record<string, OpenSession>>
  /**
   * The user's usage per calendar window, by `<environment>:d:<YYYY-MM-DD>` and
   * `<environment>:m:<YYYY-MM>` (UTC): the current and previous window of each kind. Counted
   * for every signal, blocked or not, so it is part of the fold and rebuilt by replay.
   */
  readonly usage?: Readonly<Record<string, Usage>>
}

const usageKey = (environment: Environment, window: "daily" | "monthly", ts: string) =>
  `${environment}:${window === "daily" ? "d" : "m"}:${windowKey(window, ts)}`

/** The user's usage in one window, before whatever the state has not seen yet. */
export const usageIn = (state: UserState, environment: Environment, window: "daily" | "monthly", key: string): Usage =>
  state.usage?.[`${environment}:${window === "daily" ? "d" : "m"}:${key}`] ?? noUsage

const countUsage = (state: UserState, environment: Environment, ts: string, add: Usage): Readonly<Record<string, Usage>> => {
  const next: Record<string, Usage> = { ...state.usage }
  for (const window of ["daily", "monthly"] as const) {
    const key = usageKey(environment, window, ts)
    next[key] = addUsage(next[key] ?? noUsage, add)
    // Keep the two most recent windows of each kind per environment; older ones can no longer apply.
    const prefix = key.slice(0, key.lastIndexOf(":") + 1)
    const kept = Object.keys(next).filter((k) => k.startsWith(prefix)).sort().slice(-2)
    for (const k of Object.keys(next)) if (k.startsWith(prefix) && !kept.includes(k)) delete next[k]
  }
  return next
}

export const emptyUserState: UserState = { open: {} }

export interface SessionRow {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly user_id: string
  readonly adapter: string
  readonly client_session_id: string
  readonly project_id: string | null
  readonly started_at: string
  readonly last_activity_at: string
  readonly ended_at: string | null
  readonly end_reason: "session-end" | "timeout" | null
  readonly primary_model: string | null
  readonly models: ReadonlyArray<string>
  readonly tokens_in: number
  readonly tokens_out: number
  readonly cost_usd: number
  readonly signal_count: number
  readonly error_count: number
}

export interface EventRow {
  readonly id: string
  readonly signal_id: string
  readonly org_id: string
  readonly environment: Environment
  readonly session_id: string
  readonly user_id: string
  readonly project_id: string | null
  readonly ts: string
  readonly type: string
  readonly adapter: string
  readonly model: string | null
  readonly tokens_in: number
  readonly tokens_out: number
  readonly latency_ms: number | null
  readonly cost_usd: number
  readonly cost_estimated: boolean
  readonly model_known: boolean
  readonly error_code: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly log_partition: number
  readonly log_offset: number
}

export interface Position {
  readonly partition: number
  readonly offset: number
}

export interface FoldResult {
  readonly state: UserState
  /** The latest row of every session this record touched (opened, updated or closed). */
  readonly sessions: ReadonlyArray<SessionRow>
  readonly events: ReadonlyArray<EventRow>
  /** What this record made happen that webhooks may be told about (session.started, session.ended). */
  readonly notices: ReadonlyArray<Notice>
  /** For a signal: the session it was counted in. */
  readonly sessionId?: string
}

const suffix = (id: string) => id.slice(id.indexOf("_") + 1)
/** Derived ids keep replay identical: the event of sig_X is evt_X; a session is named after its first signal. */
export const eventIdFor = (signalId: string) => `evt_${suffix(signalId)}`
export const sessionIdFor = (firstSignalId: string) => `sess_${suffix(firstSignalId)}`

const sessionKey = (environment: Environment, adapter: string) => `${environment}:${adapter}`

const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0
const nonNegative = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null
const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

const later = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b)

export const primaryModel = (counts: ReadonlyArray<readonly [string, number]>): string | null => {
  let best: readonly [string, number] | undefined
  for (const entry of counts) if (best === undefined || entry[1] > best[1]) best = entry
  return best?.[0] ?? null
}

const toRow = (
  s: OpenSession,
  userId: string,
  ended: { readonly at: string; readonly reason: "session-end" | "timeout" } | null
): SessionRow => ({
  id: s.id,
  org_id: s.org_id,
  environment: s.environment,
  user_id: userId,
  adapter: s.adapter,
  client_session_id: s.client_session_id,
  project_id: s.project_id,
  started_at: s.started_at,
  last_activity_at: s.last_activity_at,
  ended_at: ended?.at ?? null,
  end_reason: ended?.reason ?? null,
  primary_model: primaryModel(s.model_counts),
  models: s.model_counts.map(([m]) => m),
  tokens_in: s.tokens_in,
  tokens_out: s.tokens_out,
  cost_usd: s.cost_usd,
  signal_count: s.signal_count,
  error_count: s.error_count
})

const withoutKey = (open: Readonly<Record<string, OpenSession>>, key: string) => {
  const { [key]: _closed, ...rest } = open
  return rest
}

const startedData = (row: SessionRow) => ({
  session_id: row.id,
  user_id: row.user_id,
  adapter: row.adapter,
  client_session_id: row.client_session_id,
  project_id: row.project_id,
  started_at: row.started_at
})

/** The session.started notice of a session that has just opened. */
const started = (row: SessionRow): Notice =>
  notice("session.started", row.id, { org_id: row.org_id, environment: row.environment, ts: row.started_at }, startedData(row))

/** The session.ended notice of a closed session row. */
const ended = (row: SessionRow & { readonly ended_at: string; readonly end_reason: "session-end" | "timeout" }): Notice =>
  notice("session.ended", row.id, { org_id: row.org_id, environment: row.environment, ts: row.ended_at }, {
    ...startedData(row),
    ended_at: row.ended_at,
    end_reason: row.end_reason,
    duration_s: (Date.parse(row.ended_at) - Date.parse(row.started_at)) / 1000,
    signal_count: row.signal_count,
    error_count: row.error_count,
    model: row.primary_model,
    models: row.models,
    tokens_in: row.tokens_in,
    tokens_out: row.tokens_out,
    cost_usd: row.cost_usd
  })

const closedRow = (
  s: OpenSession,
  userId: string,
  at: string,
  reason: "session-end" | "timeout"
) => {
  const row = toRow(s, userId, { at, reason })
  return { row, notice: ended({ ...row, ended_at: at, end_reason: reason }) }
}

/** When an open session's inactivity timeout falls due (epoch ms). */
export const timeoutDue = (s: OpenSession): number => Date.parse(s.last_activity_at) + s.timeout_s * 1000

const foldSignal = (state: UserState, r: SignalRecord, at: Position): FoldResult => {
  const key = sessionKey(r.environment, r.adapter)
  const sessions: Array<SessionRow> = []
  const notices: Array<Notice> = []
  let open = state.open
  let current = open[key]

  // Activity after the timeout: the old session ended at its last activity, whether or not
  // its timer tick made it into the log first.
  if (current && Date.parse(r.ts) - Date.parse(current.last_activity_at) > current.timeout_s * 1000) {
    const closed = closedRow(current, r.user_id, current.last_activity_at, "timeout")
    sessions.push(closed.row)
    notices.push(closed.notice)
    open = withoutKey(open, key)
    current = undefined
  }

  const m = r.metadata
  const model = text(m.model)
  const tokensIn = count(m.tokens_in)
  const tokensOut = count(m.tokens_out)
  const usage = countUsage(state, r.environment, r.ts, { cost_usd: r.cost.usd, tokens_in: tokensIn, tokens_out: tokensOut })
  const errorCode = text(m.error_code)
  const projectId = text(m.project_id)

  const base: OpenSession = current ?? {
    id: sessionIdFor(r.signal_id),
    org_id: r.org_id,
    environment: r.environment,
    adapter: r.adapter,
    client_session_id: r.client_session_id,
    project_id: null,
    started_at: r.ts,
    last_activity_at: r.ts,
    timeout_s: r.session_timeout_s,
    tokens_in: 0,
    tokens_out: 0,
    cost_usd: 0,
    signal_count: 0,
    error_count: 0,
    model_counts: []
  }
  const modelCounts = model === null
    ? base.model_counts
    : base.model_counts.some(([name]) => name === model)
    ? base.model_counts.map(([name, n]) => (name === model ? [name, n + 1] as const : [name, n] as const))
    : [...base.model_counts, [model, 1] as const]
  const updated: OpenSession = {
    ...base,
    project_id: base.project_id ?? projectId,
    last_activity_at: later(r.ts, base.last_activity_at),
    timeout_s: r.session_timeout_s,
    tokens_in: base.tokens_in + tokensIn,
    tokens_out: base.tokens_out + tokensOut,
    cost_usd: Math.round((base.cost_usd + r.cost.usd) * 1e9) / 1e9,
    signal_count: base.signal_count + 1,
    error_count: base.error_count + (errorCode === null ? 0 : 1),
    model_counts: modelCounts
  }

  const event: EventRow = {
    id: eventIdFor(r.signal_id),
    signal_id: r.signal_id,
    org_id: r.org_id,
    environment: r.environment,
    session_id: updated.id,
    user_id: r.user_id,
    project_id: projectId ?? updated.project_id,
    ts: r.ts,
    type: r.type,
    adapter: r.adapter,
    model,
    tokens_in: tokensIn,
    tokens_out: tokensOut,
    latency_ms: nonNegative(m.latency_ms),
    cost_usd: r.cost.usd,
    cost_estimated: r.cost.estimated,
    model_known: r.cost.model_known,
    error_code: errorCode,
    metadata: m,
    log_partition: at.partition,
    log_offset: at.offset
  }

  if (current === undefined) notices.push(started(toRow(updated, r.user_id, null)))
  if (r.type === "session-end") {
    const closed = closedRow(updated, r.user_id, r.ts, "session-end")
    sessions.push(closed.row)
    notices.push(closed.notice)
    return { state: { open: withoutKey(open, key), usage }, sessions, events: [event], notices, sessionId: updated.id }
  }
  sessions.push(toRow(updated, r.user_id, null))
  return { state: { open: { ...open, [key]: updated }, usage }, sessions, events: [event], notices, sessionId: updated.id }
}

const foldTimeout = (state: UserState, r: SessionTimeoutRecord): FoldResult => {
  const entry = Object.entries(state.open).find(([, s]) => s.id === r.session_id)
  // A tick for a session that saw activity since its timer was set, or that already ended, is stale.
  if (!entry || entry[1].last_activity_at !== r.last_activity_at) return { state, sessions: [], events: [], notices: [] }
  const [key, session] = entry
  const closed = closedRow(session, r.user_id, session.last_activity_at, "timeout")
  return { state: { ...state, open: withoutKey(state.open, key) }, sessions: [closed.row], events: [], notices: [closed.notice] }
}

export const fold = (state: UserState, record: LogRecord, at: Position): FoldResult =>
  record.kind === "signal" ? foldSignal(state, record, at) : foldTimeout(state, record)
