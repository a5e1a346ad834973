import type { Event, Finding, Session, StoredSignal } from "../domain/activity.ts"
import type { StoredVerdict } from "../domain/verdict.ts"

/** The rows of sessions and events as the activity queries read them, and what the API shows of them. */

export type Count = bigint | number | string

export interface SessionRow {
  readonly id: string
  readonly user_id: string
  readonly adapter: string
  readonly client_session_id: string
  readonly project_id: string | null
  readonly started_at: Date
  readonly last_activity_at: Date
  readonly ended_at: Date | null
  readonly end_reason: "session-end" | "timeout" | null
  readonly primary_model: string | null
  readonly models: ReadonlyArray<string> | null
  readonly tokens_in: Count
  readonly tokens_out: Count
  readonly cost_usd: number
  readonly signal_count: Count
  readonly error_count: Count
  /** started_at printed by PostgreSQL with microseconds: the exact keyset position. */
  readonly sort_at: string
}

export interface EventRow {
  readonly id: string
  readonly signal_id: string
  readonly type: string
  readonly session_id: string
  readonly user_id: string
  readonly project_id: string | null
  readonly ts: Date
  readonly adapter: string
  readonly model: string | null
  readonly tokens_in: Count
  readonly tokens_out: Count
  readonly latency_ms: number | null
  readonly cost_usd: number
  readonly error_code: string | null
  readonly verdict: StoredVerdict | null
  /** metadata.findings: what the adapter found (never the secret). */
  readonly findings: unknown
  readonly sort_at: string
}

export interface SignalRow {
  readonly signal_id: string
  readonly type: string
  readonly ts: Date
  readonly metadata: Record<string, unknown> | null
}

export const iso = (d: Date | string): string => new Date(d).toISOString()
export const num = (n: Count): number => Number(n)

export const toSession = (r: SessionRow): Session => {
  const started = new Date(r.started_at)
  const until = new Date(r.ended_at ?? r.last_activity_at)
  return {
    id: r.id,
    user_id: r.user_id,
    project_id: r.project_id,
    adapter: r.adapter,
    client_session_id: r.client_session_id,
    status: r.ended_at === null ? "active" : "ended",
    started_at: started.toISOString(),
    ended_at: r.ended_at === null ? null : iso(r.ended_at),
    end_reason: r.end_reason,
    duration_s: Math.max(0, until.getTime() - started.getTime()) / 1000,
    model: r.primary_model,
    models: [...(r.models ?? [])],
    tokens_in: num(r.tokens_in),
    tokens_out: num(r.tokens_out),
    cost_usd: Number(r.cost_usd),
    signal_count: num(r.signal_count),
    error_count: num(r.error_count)
  }
}

export const toEvent = (r: EventRow): Event => ({
  id: r.id,
  signal_id: r.signal_id,
  type: r.type,
  session_id: r.session_id,
  user_id: r.user_id,
  project_id: r.project_id,
  ts: iso(r.ts),
  adapter: r.adapter,
  model: r.model,
  tokens_in: num(r.tokens_in),
  tokens_out: num(r.tokens_out),
  latency_ms: r.latency_ms === null ? null : Number(r.latency_ms),
  cost_usd: Number(r.cost_usd),
  error_code: r.error_code,
  verdict: r.verdict ?? null,
  ...findingsOf(r.findings)
})

/** Only well-formed findings are shown (the engine schema types them; the log may hold older ones). */
const findingsOf = (raw: unknown): { readonly findings?: ReadonlyArray<Finding> } => {
  if (!Array.isArray(raw) || raw.length === 0) return {}
  const findings = raw.flatMap((f) =>
    typeof f?.kind === "string" && typeof f?.where === "string" && typeof f?.fingerprint === "string"
      ? [{ kind: f.kind as string, where: f.where as string, fingerprint: f.fingerprint as string }]
      : []
  )
  return findings.length > 0 ? { findings } : {}
}

export const toSignal = (r: SignalRow): StoredSignal => ({
  id: r.signal_id,
  type: r.type,
  timestamp: iso(r.ts),
  metadata: r.metadata ?? {}
})
