import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import type { Environment } from "../../src/domain/environments.ts"
import { databaseFromUrl } from "../../src/store/database.ts"

/**
 * Writes rows of the `sessions` and `events` projections directly, as the engine would, so the
 * read APIs can be tested without the ingestion pipeline. Timestamps are ISO 8601 strings and
 * may carry microseconds (PostgreSQL keeps them; the APIs print milliseconds).
 */

export const hexId = (prefix: string): string => `${prefix}_${randomBytes(16).toString("hex")}`

export interface SessionSeed {
  readonly id?: string
  readonly org_id: string
  readonly environment: Environment
  readonly user_id: string
  readonly adapter?: string
  readonly client_session_id?: string
  readonly project_id?: string | null
  readonly started_at: string
  readonly last_activity_at?: string
  readonly ended_at?: string | null
  readonly end_reason?: "session-end" | "timeout" | null
  readonly primary_model?: string | null
  readonly models?: ReadonlyArray<string>
  readonly tokens_in?: number
  readonly tokens_out?: number
  readonly cost_usd?: number
  readonly signal_count?: number
  readonly error_count?: number
}

export type SessionRow = Required<SessionSeed>

export interface EventSeed {
  readonly id?: string
  readonly signal_id?: string
  readonly org_id: string
  readonly environment: Environment
  readonly session_id: string
  readonly user_id: string
  readonly project_id?: string | null
  readonly ts: string
  readonly type?: string
  readonly adapter?: string
  readonly model?: string | null
  readonly tokens_in?: number
  readonly tokens_out?: number
  readonly latency_ms?: number | null
  readonly cost_usd?: number
  readonly cost_estimated?: boolean
  readonly model_known?: boolean
  readonly error_code?: string | null
  readonly metadata?: Record<string, unknown>
}

export type EventRow = Required<EventSeed>

export interface Seeder {
  readonly session: (seed: SessionSeed) => Promise<SessionRow>
  readonly event: (seed: EventSeed) => Promise<EventRow>
  readonly close: () => Promise<void>
}

let logOffset = 0

/** A seeder holding one small pool on the given database until `close`. */
export const seeder = (databaseUrl: string): Seeder => {
  const runtime = ManagedRuntime.make(databaseFromUrl(databaseUrl))
  const run = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> => runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, f))

  const session = async (seed: SessionSeed): Promise<SessionRow> => {
    const row: SessionRow = {
      id: hexId("sess"),
      adapter: "claude-code",
      client_session_id: `cs-${randomBytes(6).toString("hex")}`,
      project_id: null,
      last_activity_at: seed.ended_at ?? seed.started_at,
      ended_at: null,
      end_reason: seed.ended_at ? "session-end" : null,
      primary_model: seed.models?.[0] ?? null,
      models: seed.primary_model ? [seed.primary_model] : [],
      tokens_in: 0,
      tokens_out: 0,
      cost_usd: 0,
      signal_count: 0,
      error_count: 0,
      ...seed
    }
    await run((sql) =>
      sql`INSERT INTO sessions (id, org_id, environment, user_id, adapter, client_session_id, project_id, started_at,
          last_activity_at, ended_at, end_reason, primary_model, models, tokens_in, tokens_out, cost_usd, signal_count, error_count)
        VALUES (${row.id}, ${row.org_id}, ${row.environment}, ${row.user_id}, ${row.adapter}, ${row.client_session_id},
          ${row.project_id}, ${row.started_at}::timestamptz, ${row.last_activity_at}::timestamptz,
          ${row.ended_at}::timestamptz, ${row.end_reason}, ${row.primary_model}, ${JSON.stringify(row.models)}::jsonb,
          ${row.tokens_in}, ${row.tokens_out}, ${row.cost_usd}, ${row.signal_count}, ${row.error_count})`
    )
    return row
  }

  const event = async (seed: EventSeed): Promise<EventRow> => {
    // As the service makes them: an event's id is its signal's, under another prefix.
    const signalId = seed.signal_id ?? hexId("sig")
    const row: EventRow = {
      id: `evt_${signalId.slice(4)}`,
      signal_id: signalId,
      project_id: null,
      type: "post-tool",
      adapter: "claude-code",
      model: null,
      tokens_in: 0,
      tokens_out: 0,
      latency_ms: null,
      cost_usd: 0,
      cost_estimated: false,
      model_known: seed.model !== undefined && seed.model !== null,
      error_code: null,
      metadata: {},
      ...seed
    }
    logOffset += 1
    await run((sql) =>
      sql`INSERT INTO events (id, signal_id, org_id, environment, session_id, user_id, project_id, ts, type, adapter, model,
          tokens_in, tokens_out, latency_ms, cost_usd, cost_estimated, model_known, error_code, metadata, log_partition, log_offset)
        VALUES (${row.id}, ${row.signal_id}, ${row.org_id}, ${row.environment}, ${row.session_id}, ${row.user_id},
          ${row.project_id}, ${row.ts}::timestamptz, ${row.type}, ${row.adapter}, ${row.model}, ${row.tokens_in},
          ${row.tokens_out}, ${row.latency_ms}, ${row.cost_usd}, ${row.cost_estimated}, ${row.model_known},
          ${row.error_code}, ${JSON.stringify(row.metadata)}::jsonb, 0, ${logOffset})`
    )
    return row
  }

  return { session, event, close: () => runtime.dispose() }
}

/** ISO 8601 UTC with microseconds, `ms` (may be fractional) after `base` (whose microseconds count). */
export const at = (base: string, ms: number): string => {
  const fraction = /\.(\d+)Z$/i.exec(base)?.[1] ?? ""
  const micros = Math.round(ms * 1000) + Number(`${fraction}000000`.slice(3, 6))
  const wholeMs = Math.floor(micros / 1000)
  const iso = new Date(Date.parse(base) + wholeMs).toISOString()
  return `${iso.slice(0, 23)}${String(micros - wholeMs * 1000).padStart(3, "0")}Z`
}

/** How the API prints a seeded timestamp: milliseconds, UTC. */
export const apiTime = (iso: string): string => new Date(Date.parse(iso)).toISOString()

export interface Tenant {
  readonly org_id: string
  readonly environment: Environment
}

/** Sessions sorted as the APIs sort them: by start (exact, microseconds) then id. */
export const bySessionStart = (order: "asc" | "desc") => (a: SessionRow, b: SessionRow): number => {
  const c = a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  return order === "asc" ? c : -c
}

/** Events sorted as the APIs sort them: by ts (exact) then id. */
export const byEventTs = (order: "asc" | "desc") => (a: EventRow, b: EventRow): number => {
  const c = a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  return order === "asc" ? c : -c
}

export const adapters = ["claude-code", "cursor", "codex"] as const
export const models = ["claude-sonnet-4", "claude-sonnet-4-5", "gpt-4o"] as const
export const projects = [null, "proj_alpha", "proj_beta"] as const
export const activityBase = "2025-03-01T08:00:00.000000Z"

/**
 * A varied, deterministic activity history for one tenant: `count` sessions, ten minutes
 * apart in threes (the first two of each three start at the same instant, the third 500 µs
 * later), of the given users in turn, across adapters, projects and models, some open; each
 * with 1–3 events (events of two sessions that start together share timestamps), some failed.
 */
export const seedActivity = async (
  seed: Seeder,
  tenant: Tenant,
  options: { readonly users: ReadonlyArray<string>; readonly count: number; readonly base?: string }
): Promise<{ readonly sessions: Array<SessionRow>; readonly events: Array<EventRow> }> => {
  const base = options.base ?? activityBase
  const sessions: Array<SessionRow> = []
  const events: Array<EventRow> = []
  for (let i = 0; i < options.count; i++) {
    const startedAt = at(base, Math.floor(i / 3) * 600_000 + (i % 3 === 2 ? 0.5 : 0))
    const model = i % 7 === 0 ? null : models[(i + (i >> 2)) % 3]!
    const eventCount = 1 + (i % 3)
    const open = i % 4 === 2
    const endMs = (i + 1) * 60_000
    const session = await seed.session({
      ...tenant,
      user_id: options.users[i % options.users.length]!,
      adapter: adapters[i % 3]!,
      project_id: projects[(i >> 1) % 3]!,
      started_at: startedAt,
      last_activity_at: at(startedAt, open ? 300_000 : endMs),
      ended_at: open ? null : at(startedAt, endMs),
      end_reason: open ? null : i % 2 === 0 ? "session-end" : "timeout",
      primary_model: model,
      models: model === null ? [] : i % 2 === 0 ? [model] : [model, "gpt-4o-mini"],
      tokens_in: i === 5 ? 3_000_000_000 : 1000 * i,
      tokens_out: 10 * i,
      cost_usd: i * 0.125,
      signal_count: eventCount,
      error_count: i % 5 === 0 ? 1 : 0
    })
    sessions.push(session)
    for (let k = 0; k < eventCount; k++) {
      events.push(
        await seed.event({
          ...tenant,
          session_id: session.id,
          user_id: session.user_id,
          project_id: session.project_id,
          ts: at(startedAt, 1000 * (k + 1)),
          type: ["user-prompt", "post-tool", "stop"][k]!,
          adapter: session.adapter,
          model,
          tokens_in: 100 * (k + 1),
          tokens_out: 10 * (k + 1),
          latency_ms: model === null ? null : 50.5 * (k + 1),
          cost_usd: model === null ? 0 : 0.01 * (k + 1),
          cost_estimated: k === 2,
          model_known: model !== null,
          error_code: (i + k) % 5 === 0 ? (k % 2 === 0 ? "rate_limited" : "context_window_exceeded") : null,
          metadata: { step: k, ...(model === null ? {} : { model }) }
        })
      )
    }
  }
  return { sessions, events }
}

/** A session as GET /api/v1/sessions shows it. */
export const sessionJson = (s: SessionRow) => ({
  id: s.id,
  user_id: s.user_id,
  project_id: s.project_id,
  adapter: s.adapter,
  client_session_id: s.client_session_id,
  status: s.ended_at === null ? "active" : "ended",
  started_at: apiTime(s.started_at),
  ended_at: s.ended_at === null ? null : apiTime(s.ended_at),
  end_reason: s.end_reason,
  duration_s: (Date.parse(s.ended_at ?? s.last_activity_at) - Date.parse(s.started_at)) / 1000,
  model: s.primary_model,
  models: [...s.models],
  tokens_in: s.tokens_in,
  tokens_out: s.tokens_out,
  cost_usd: s.cost_usd,
  signal_count: s.signal_count,
  error_count: s.error_count
})

/** An event as GET /api/v1/events shows it. */
export const eventJson = (e: EventRow) => ({
  id: e.id,
  signal_id: e.signal_id,
  type: e.type,
  session_id: e.session_id,
  user_id: e.user_id,
  project_id: e.project_id,
  ts: apiTime(e.ts),
  adapter: e.adapter,
  model: e.model,
  tokens_in: e.tokens_in,
  tokens_out: e.tokens_out,
  latency_ms: e.latency_ms,
  cost_usd: e.cost_usd,
  error_code: e.error_code,
  verdict: null // seeded events carry no verdict
})

/** A stored signal as GET /sessions/:id shows it. */
export const signalJson = (e: EventRow) => ({ id: e.signal_id, type: e.type, timestamp: apiTime(e.ts), metadata: e.metadata })
