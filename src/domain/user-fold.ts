import { observeTokens } from "./anomaly.ts"
import { afterSessionEnd, foldDrift } from "./drift-fold.ts"
import type { Environment } from "./environments.ts"
import type { FoldResult } from "./fold-result.ts"
import { foldGoal } from "./goal-fold.ts"
import { instantOf, later } from "./instants.ts"
import { type EventRow, eventIdFor, type GoalRow, type Position, type SessionRow, sessionIdFor } from "./projection-rows.ts"
import type { LogRecord, SessionTimeoutRecord, SignalRecord } from "./records.ts"
import { countsAsUsage } from "./signals.ts"
import { countUsage, defaultFoldSettings, type FoldSettings, type OpenSession, type UserState } from "./user-state.ts"
import { type Notice, notice } from "./notices.ts"

/**
 * The per-user fold: state × record → state, plus the projection rows the record changes.
 * Pure and deterministic: it reads nothing but its inputs (record timestamps, never a clock),
 * so replaying a log yields exactly the projections the live run wrote.
 *
 * A session is one run of one tool: the signals of one user, environment, adapter and client
 * session id (the `session_id` the adapter sends), split by inactivity. It starts with the first
 * signal, or with the first signal after an inactivity timeout or an explicit close; it ends on
 * `session-end` (ended_at = that signal) or by timeout (ended_at = its last activity), whichever
 * comes first. Two concurrent runs of one tool are two sessions.
 *
 * The state and the rows are in user-state.ts and projection-rows.ts, what a step answers in
 * fold-result.ts; goal commands fold in goal-fold.ts.
 */

/**
 * Most sessions one user may have open at once (a session per environment and adapter: a person
 * runs a handful of tools). A signal that would open one more first ends the user's least
 * recently active session, as its inactivity timeout would (`timeout` at its last activity), so
 * one key sending a new `adapter` per signal cannot grow its state, its timers and the cost of
 * its every signal without bound. Part of the fold: replay applies it the same way.
 */
export const maxOpenSessions = 32

const count = (value: unknown): number => typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0
const nonNegative = (value: unknown): number | null => typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null
const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)

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

/** Where a run's open session is kept in the state (a JSON array: no two runs share a key). */
export const sessionKey = (environment: Environment, adapter: string, clientSessionId: string) => JSON.stringify([environment, adapter, clientSessionId])

/**
 * The open session of a run, and its key. States snapshotted before sessions were per run keep
 * one session per `<environment>:<adapter>`: the run it holds goes on under its new key; another
 * run of that adapter opens a session of its own while the old one times out as it would have.
 */
const openSessionOf = (open: UserState["open"], r: SignalRecord) => {
  const key = sessionKey(r.environment, r.adapter, r.client_session_id)
  const current = open[key]
  if (current !== undefined) return { open, current }
  const legacyKey = `${r.environment}:${r.adapter}`
  const legacy = open[legacyKey]
  if (legacy === undefined || legacy.client_session_id !== r.client_session_id) return { open, current: undefined }
  return { open: { ...withoutKey(open, legacyKey), [key]: legacy }, current: legacy }
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
export const timeoutDue = (s: OpenSession): number => instantOf(s.last_activity_at) + s.timeout_s * 1000

const foldSignal = (state: UserState, r: SignalRecord, at: Position, settings: FoldSettings): FoldResult => {
  const key = sessionKey(r.environment, r.adapter, r.client_session_id)
  const sessions: Array<SessionRow> = []
  const notices: Array<Notice> = []
  let { current, open } = openSessionOf(state.open, r)

  // Activity after the timeout: the old session ended at its last activity, whether or not
  // its timer tick made it into the log first.
  if (current && instantOf(r.ts) - instantOf(current.last_activity_at) > current.timeout_s * 1000) {
    const closed = closedRow(current, r.user_id, current.last_activity_at, "timeout")
    sessions.push(closed.row)
    notices.push(closed.notice)
    open = withoutKey(open, key)
    current = undefined
  }

  if (current === undefined) {
    const keys = Object.keys(open)
    if (keys.length >= maxOpenSessions) {
      let oldest = keys[0]!
      for (const k of keys) if (instantOf(open[k]!.last_activity_at) < instantOf(open[oldest]!.last_activity_at)) oldest = k
      const evicted = closedRow(open[oldest]!, r.user_id, open[oldest]!.last_activity_at, "timeout")
      sessions.push(evicted.row)
      notices.push(evicted.notice)
      open = withoutKey(open, oldest)
    }
  }

  const m = r.metadata
  const model = text(m.model)
  // A pre-tool signal is in its session's timeline and signal count, with no usage.
  const counted = countsAsUsage(r.type)
  const tokensIn = counted ? count(m.tokens_in) : 0
  const tokensOut = counted ? count(m.tokens_out) : 0
  const cost = counted ? r.cost.usd : 0
  const usage = countUsage(state, r.environment, r.ts, r.time_zone, { cost_usd: cost, tokens_in: tokensIn, tokens_out: tokensOut })
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
  const seen = model === null ? -1 : base.model_counts.findIndex(([name]) => name === model)
  const modelCounts = model === null
    ? base.model_counts
    : seen < 0
    ? [...base.model_counts, [model, 1] as const]
    : base.model_counts.with(seen, [model, base.model_counts[seen]![1] + 1] as const)
  const updated: OpenSession = {
    ...base,
    project_id: base.project_id ?? projectId,
    last_activity_at: later(r.ts, base.last_activity_at),
    timeout_s: r.session_timeout_s,
    tokens_in: base.tokens_in + tokensIn,
    tokens_out: base.tokens_out + tokensOut,
    cost_usd: Math.round((base.cost_usd + cost) * 1e9) / 1e9,
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
    cost_usd: cost,
    cost_estimated: counted && r.cost.estimated,
    model_known: r.cost.model_known,
    error_code: errorCode,
    metadata: m,
    log_partition: at.partition,
    log_offset: at.offset
  }

  if (current === undefined) notices.push(started(toRow(updated, r.user_id, null)))

  let tokens = state.tokens
  if (tokensIn + tokensOut > 0) {
    const observed = observeTokens(tokens?.[r.environment], tokensIn + tokensOut, settings.spike)
    tokens = { ...tokens, [r.environment]: observed.baseline }
    if (observed.spike) {
      notices.push(notice("anomaly.detected", `token_spike:${r.signal_id}`, r, {
        anomaly_type: "token_spike",
        user_id: r.user_id,
        ...observed.spike,
        session_id: updated.id
      }))
    }
  }
  const drift = foldDrift(state, r, settings.drift, updated.id)
  const driftBefore = state.drift?.[r.environment]
  const closing = r.type === "session-end"
  const next: UserState = {
    ...state,
    open: closing ? withoutKey(open, key) : { ...open, [key]: updated },
    usage,
    ...(tokens ? { tokens } : {}),
    ...(drift.state !== driftBefore &&
        (driftBefore !== undefined || drift.state.streak > 0 || drift.state.context !== undefined || drift.state.sessions !== undefined)
      ? { drift: { ...state.drift, [r.environment]: drift.state } }
      : {})
  }
  if (closing) {
    const closed = closedRow(updated, r.user_id, r.ts, "session-end")
    sessions.push(closed.row)
    notices.push(closed.notice)
  } else {
    sessions.push(toRow(updated, r.user_id, null))
  }
  return {
    state: closing ? afterSessionEnd(next, r.environment, updated.id) : next,
    sessions,
    events: [event],
    notices,
    sessionId: updated.id,
    ...(drift.detected ? { drift: drift.detected } : {}),
    ...(drift.judged ? { judged: drift.judged } : {})
  }
}

const foldTimeout = (state: UserState, r: SessionTimeoutRecord): FoldResult => {
  const entry = Object.entries(state.open).find(([, s]) => s.id === r.session_id)
  // A tick for a session that saw activity since its timer was set, or that already ended, is stale.
  if (!entry || entry[1].last_activity_at !== r.last_activity_at) return { state, sessions: [], events: [], notices: [] }
  const [key, session] = entry
  const closed = closedRow(session, r.user_id, session.last_activity_at, "timeout")
  const ended = afterSessionEnd({ ...state, open: withoutKey(state.open, key) }, r.environment, session.id)
  return { state: ended, sessions: [closed.row], events: [], notices: [closed.notice] }
}

export const fold = (state: UserState, record: LogRecord, at: Position, settings: FoldSettings = defaultFoldSettings): FoldResult => {
  switch (record.kind) {
    case "signal":
      return foldSignal(state, record, at, settings)
    case "session-timeout":
      return foldTimeout(state, record)
    case "goal":
      return foldGoal(state, record, at)
  }
}
