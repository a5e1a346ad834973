import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Event, Order, Session, StoredSignal, UsageGroup, UsageGroupBy, UsageReport, UsageTotals } from "../domain/activity.ts"
import type { Environment } from "../domain/environments.ts"
import { BadRequest, NotFound } from "../domain/errors.ts"
import { decodePosition, encodePosition, type Position } from "../domain/keyset.ts"
import type { Page } from "../domain/pagination.ts"
import { isStorableText } from "../domain/text.ts"
import type { StoredVerdict } from "../domain/verdict.ts"

/** Every query is confined to one org and one environment: the caller's. */
export interface Tenant {
  readonly orgId: string
  readonly environment: Environment
}

/** A page request of a time-ordered list. `order` is what the client asked for, if anything. */
export interface ListRequest {
  readonly limit: number
  readonly cursor: string | undefined
  readonly order?: Order | undefined
}

/** Filters of GET /sessions; `from` and `to` are instants as parseInstant returns them. */
export interface SessionFilters {
  readonly user_id?: string | undefined
  readonly project_id?: string | undefined
  readonly model?: string | undefined
  readonly adapter?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
}

/** Filters of GET /events. */
export interface EventFilters {
  readonly session_id?: string | undefined
  readonly user_id?: string | undefined
  readonly project_id?: string | undefined
  readonly model?: string | undefined
  readonly adapter?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly error_only?: boolean | undefined
  readonly action?: "block" | "warn" | "log" | "notify" | undefined
  readonly type?: string | undefined
}

/** A usage report's question: the instants are normalized (parseInstant), `from` before `to`. */
export interface UsageQuery {
  readonly group_by: UsageGroupBy
  readonly from: string
  readonly to: string
  readonly user_id?: string | undefined
  readonly project_id?: string | undefined
  readonly model?: string | undefined
  readonly adapter?: string | undefined
  readonly limit: number
  readonly cursor: string | undefined
}

/**
 * Where a usage page ended: its last group's key, and for groups ordered by cost that cost (the
 * exact decimal PostgreSQL summed, so the next page's comparison is exact too). Opaque to clients.
 */
interface UsagePosition {
  readonly g: UsageGroupBy
  readonly k: string
  readonly c?: string
}

const encodeUsagePosition = (p: UsagePosition) => Buffer.from(JSON.stringify(p)).toString("base64url")
/** `YYYY-MM-DD` naming a day that exists. */
const isCalendarDate = (k: string): boolean => {
  const day = new Date(`${k}T00:00:00Z`)
  return /^\d{4}-\d{2}-\d{2}$/.test(k) && !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === k
}

const decodeUsagePosition = (cursor: string, groupBy: UsageGroupBy): UsagePosition | undefined => {
  try {
    const p = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Partial<UsagePosition>
    // A key this endpoint could have returned: text PostgreSQL stores (a crafted one is a 400, not
    // a failed query), and for days a real calendar date.
    if (p.g !== groupBy || typeof p.k !== "string" || !isStorableText(p.k)) return undefined
    if (groupBy === "day") return isCalendarDate(p.k) ? { g: p.g, k: p.k } : undefined
    return typeof p.c === "string" && /^\d+(\.\d+)?$/.test(p.c) ? { g: p.g, k: p.k, c: p.c } : undefined
  } catch {
    return undefined
  }
}

interface UsageRow {
  readonly key: string
  readonly signals: Count
  readonly sessions: Count
  readonly tokens_in: Count | null
  readonly tokens_out: Count | null
  readonly cost_usd: string | number | null
  readonly error_count: Count
}

const toTotals = (r: UsageRow | undefined): UsageTotals => ({
  signals: num(r?.signals ?? 0),
  sessions: num(r?.sessions ?? 0),
  tokens_in: num(r?.tokens_in ?? 0),
  tokens_out: num(r?.tokens_out ?? 0),
  cost_usd: Number(r?.cost_usd ?? 0),
  error_count: num(r?.error_count ?? 0)
})

export interface SessionPage extends Page<Session> {
  readonly total: number
}

type Count = bigint | number | string

interface SessionRow {
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

interface EventRow {
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
  readonly sort_at: string
}

interface SignalRow {
  readonly signal_id: string
  readonly type: string
  readonly ts: Date
  readonly metadata: Record<string, unknown> | null
}

const iso = (d: Date | string): string => new Date(d).toISOString()
const num = (n: Count): number => Number(n)

const toSession = (r: SessionRow): Session => {
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

const toEvent = (r: EventRow): Event => ({
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
  verdict: r.verdict ?? null
})

const toSignal = (r: SignalRow): StoredSignal => ({
  id: r.signal_id,
  type: r.type,
  timestamp: iso(r.ts),
  metadata: r.metadata ?? {}
})

const invalidCursor = BadRequest.of("the cursor is not one this endpoint returned", "invalid_parameters")

/**
 * Where a list starts and in which direction it runs. A cursor carries the direction of the
 * listing it came from, so it continues that listing when `order` is not given; an `order`
 * that contradicts it is a 400.
 */
const resolvePage = (request: ListRequest): Effect.Effect<{ readonly order: Order; readonly after: Position | undefined }, BadRequest> => {
  if (request.cursor === undefined || request.cursor === "") {
    return Effect.succeed({ order: request.order ?? "desc", after: undefined })
  }
  const after = decodePosition(request.cursor)
  if (after === undefined) return Effect.fail(invalidCursor)
  if (request.order !== undefined && request.order !== after.order) {
    return Effect.fail(BadRequest.of(
      `the cursor continues a listing in ${after.order} order; pass order=${after.order} or start again without a cursor`,
      "invalid_parameters"
    ))
  }
  return Effect.succeed({ order: after.order, after })
}

/** Given up to `limit + 1` rows in page order, the page and the cursor after its last item. */
const pageOf = <R extends { readonly id: string; readonly sort_at: string }, A>(
  rows: ReadonlyArray<R>,
  limit: number,
  order: Order,
  to: (r: R) => A
): Page<A> => {
  const has_more = rows.length > limit
  const kept = has_more ? rows.slice(0, limit) : rows
  const last = kept[kept.length - 1]
  return {
    data: kept.map(to),
    cursor: has_more && last !== undefined ? encodePosition({ order, at: last.sort_at, id: last.id }) : "",
    has_more
  }
}

/**
 * Read side of sessions and events (the projections the engine writes). Lists are keyset
 * paginated on (time, id), so rows inserted between two page requests never shift a page:
 * nothing that existed at the first request is repeated or skipped. SQL failures are defects.
 */
export class Activity extends Context.Service<Activity, {
  readonly listSessions: (tenant: Tenant, filters: SessionFilters, request: ListRequest) => Effect.Effect<SessionPage, BadRequest>
  /** One session; with `userId`, only if it is that user's. */
  readonly getSession: (tenant: Tenant, sessionId: string, userId?: string) => Effect.Effect<Session, NotFound>
  /** Every signal of a session, oldest first (the session is assumed to be the tenant's). */
  readonly sessionSignals: (tenant: Tenant, sessionId: string) => Effect.Effect<ReadonlyArray<StoredSignal>>
  readonly listSessionEvents: (
    tenant: Tenant,
    sessionId: string,
    request: ListRequest
  ) => Effect.Effect<Page<Event>, NotFound | BadRequest>
  readonly listEvents: (tenant: Tenant, filters: EventFilters, request: ListRequest) => Effect.Effect<Page<Event>, BadRequest>
  readonly getEvent: (tenant: Tenant, eventId: string) => Effect.Effect<Event, NotFound>
  /** Usage in a time range, in total and by group (ordered by cost, or newest day first), a page of groups. */
  readonly usage: (tenant: Tenant, query: UsageQuery) => Effect.Effect<UsageReport, BadRequest>
  /** A user's sessions, newest first, optionally only those started before an instant or of one adapter. */
  readonly listUserSessions: (
    tenant: Tenant,
    userId: string,
    options: { readonly limit: number; readonly before?: string | undefined; readonly adapter?: string | undefined }
  ) => Effect.Effect<ReadonlyArray<Session>>
}>()("signal-engine/store/Activity") {
  static readonly layer = Layer.effect(
    Activity,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const sortAt = (column: string) =>
        sql`to_char(${sql(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sort_at`

      const sessionColumns = sql`id, user_id, adapter, client_session_id, project_id, started_at, last_activity_at,
        ended_at, end_reason, primary_model, models, tokens_in, tokens_out, cost_usd, signal_count, error_count,
        ${sortAt("started_at")}`

      const eventColumns = sql`id, signal_id, type, session_id, user_id, project_id, ts, adapter, model,
        tokens_in, tokens_out, latency_ms, cost_usd, error_code, verdict, ${sortAt("ts")}`

      const inTenant = (tenant: Tenant) => sql`org_id = ${tenant.orgId} AND environment = ${tenant.environment}`

      /** The keyset condition after `position` on (column, id), and the ORDER BY of the direction. */
      const keyset = (column: "started_at" | "ts", order: Order, after: Position | undefined) => ({
        where: after === undefined
          ? sql`1=1`
          : order === "desc"
          ? sql`(${sql(column)}, id) < (${after.at}::timestamptz, ${after.id})`
          : sql`(${sql(column)}, id) > (${after.at}::timestamptz, ${after.id})`,
        orderBy: order === "desc" ? sql`ORDER BY ${sql(column)} DESC, id DESC` : sql`ORDER BY ${sql(column)} ASC, id ASC`
      })

      const sessionFilters = (tenant: Tenant, f: SessionFilters) =>
        sql.and([
          inTenant(tenant),
          ...(f.user_id !== undefined ? [sql`user_id = ${f.user_id}`] : []),
          ...(f.project_id !== undefined ? [sql`project_id = ${f.project_id}`] : []),
          ...(f.model !== undefined ? [sql`primary_model = ${f.model}`] : []),
          ...(f.adapter !== undefined ? [sql`adapter = ${f.adapter}`] : []),
          ...(f.from !== undefined ? [sql`started_at >= ${f.from}::timestamptz`] : []),
          ...(f.to !== undefined ? [sql`started_at < ${f.to}::timestamptz`] : [])
        ])

      const listSessions = Effect.fn("Activity.listSessions")(function*(
        tenant: Tenant,
        filters: SessionFilters,
        request: ListRequest
      ) {
        const { order, after } = yield* resolvePage(request)
        const where = sessionFilters(tenant, filters)
        const ks = keyset("started_at", order, after)
        const [rows, counted] = yield* Effect.all([
          sql<SessionRow>`SELECT ${sessionColumns} FROM sessions WHERE ${where} AND ${ks.where}
            ${ks.orderBy} LIMIT ${request.limit + 1}`,
          sql<{ readonly n: Count }>`SELECT count(*) AS n FROM sessions WHERE ${where}`
        ], { concurrency: 2 }).pipe(Effect.orDie)
        return { ...pageOf(rows, request.limit, order, toSession), total: num(counted[0]?.n ?? 0) }
      })

      const getSession = Effect.fn("Activity.getSession")(function*(tenant: Tenant, sessionId: string, userId?: string) {
        const rows = yield* sql<SessionRow>`SELECT ${sessionColumns} FROM sessions
          WHERE id = ${sessionId} AND ${inTenant(tenant)} ${userId === undefined ? sql`` : sql`AND user_id = ${userId}`}`
          .pipe(Effect.orDie)
        const row = rows[0]
        if (!row) return yield* NotFound.of(`session ${sessionId} not found`)
        return toSession(row)
      })

      const sessionSignals = Effect.fn("Activity.sessionSignals")(function*(tenant: Tenant, sessionId: string) {
        const rows = yield* sql<SignalRow>`SELECT signal_id, type, ts, metadata FROM events
          WHERE session_id = ${sessionId} AND ${inTenant(tenant)} ORDER BY ts ASC, id ASC`.pipe(Effect.orDie)
        return rows.map(toSignal)
      })

      const listSessionEvents = Effect.fn("Activity.listSessionEvents")(function*(
        tenant: Tenant,
        sessionId: string,
        request: ListRequest
      ) {
        const { order, after } = yield* resolvePage(request)
        const exists = yield* sql<{ readonly id: string }>`SELECT id FROM sessions
          WHERE id = ${sessionId} AND ${inTenant(tenant)}`.pipe(Effect.orDie)
        if (exists.length === 0) return yield* NotFound.of(`session ${sessionId} not found`)
        const ks = keyset("ts", order, after)
        const rows = yield* sql<EventRow>`SELECT ${eventColumns} FROM events
          WHERE session_id = ${sessionId} AND ${inTenant(tenant)} AND ${ks.where}
          ${ks.orderBy} LIMIT ${request.limit + 1}`.pipe(Effect.orDie)
        return pageOf(rows, request.limit, order, toEvent)
      })

      const listEvents = Effect.fn("Activity.listEvents")(function*(tenant: Tenant, f: EventFilters, request: ListRequest) {
        const { order, after } = yield* resolvePage(request)
        const where = sql.and([
          inTenant(tenant),
          ...(f.session_id !== undefined ? [sql`session_id = ${f.session_id}`] : []),
          ...(f.user_id !== undefined ? [sql`user_id = ${f.user_id}`] : []),
          ...(f.project_id !== undefined ? [sql`project_id = ${f.project_id}`] : []),
          ...(f.model !== undefined ? [sql`model = ${f.model}`] : []),
          ...(f.adapter !== undefined ? [sql`adapter = ${f.adapter}`] : []),
          ...(f.from !== undefined ? [sql`ts >= ${f.from}::timestamptz`] : []),
          ...(f.to !== undefined ? [sql`ts < ${f.to}::timestamptz`] : []),
          ...(f.error_only === true ? [sql`error_code IS NOT NULL`] : []),
          ...(f.action !== undefined ? [sql`verdict->>'action' = ${f.action}`] : []),
          ...(f.type !== undefined ? [sql`type = ${f.type}`] : [])
        ])
        const ks = keyset("ts", order, after)
        const rows = yield* sql<EventRow>`SELECT ${eventColumns} FROM events WHERE ${where} AND ${ks.where}
          ${ks.orderBy} LIMIT ${request.limit + 1}`.pipe(Effect.orDie)
        return pageOf(rows, request.limit, order, toEvent)
      })

      const getEvent = Effect.fn("Activity.getEvent")(function*(tenant: Tenant, eventId: string) {
        const rows = yield* sql<EventRow>`SELECT ${eventColumns} FROM events WHERE id = ${eventId} AND ${inTenant(tenant)}`
          .pipe(Effect.orDie)
        const row = rows[0]
        if (!row) return yield* NotFound.of(`event ${eventId} not found`)
        return toEvent(row)
      })

      const listUserSessions = Effect.fn("Activity.listUserSessions")(function*(
        tenant: Tenant,
        userId: string,
        options: { readonly limit: number; readonly before?: string | undefined; readonly adapter?: string | undefined }
      ) {
        const rows = yield* sql<SessionRow>`SELECT ${sessionColumns} FROM sessions
          WHERE ${inTenant(tenant)} AND user_id = ${userId}
          ${options.before === undefined ? sql`` : sql`AND started_at < ${options.before}::timestamptz`}
          ${options.adapter === undefined ? sql`` : sql`AND adapter = ${options.adapter}`}
          ORDER BY started_at DESC, id DESC LIMIT ${options.limit}`.pipe(Effect.orDie)
        return rows.map(toSession)
      })

      const usage = Effect.fn("Activity.usage")(function*(tenant: Tenant, q: UsageQuery) {
        const after = q.cursor === undefined || q.cursor === "" ? undefined : decodeUsagePosition(q.cursor, q.group_by)
        if (q.cursor !== undefined && q.cursor !== "" && after === undefined) return yield* invalidCursor
        const zones = yield* sql<{ readonly time_zone: string }>`SELECT time_zone FROM orgs WHERE id = ${tenant.orgId}`
          .pipe(Effect.orDie)
        const timeZone = zones[0]?.time_zone ?? "UTC"
        const where = sql.and([
          inTenant(tenant),
          sql`ts >= ${q.from}::timestamptz`,
          sql`ts < ${q.to}::timestamptz`,
          ...(q.user_id !== undefined ? [sql`user_id = ${q.user_id}`] : []),
          ...(q.project_id !== undefined ? [sql`project_id = ${q.project_id}`] : []),
          ...(q.model !== undefined ? [sql`model = ${q.model}`] : []),
          ...(q.adapter !== undefined ? [sql`adapter = ${q.adapter}`] : [])
        ])
        // Costs are summed as exact decimals (each event's cost is kept to the nano-dollar), so a
        // sum does not depend on the order rows are read in, and a page boundary compares exactly.
        const figures = sql`count(*) AS signals, count(DISTINCT session_id) AS sessions,
          sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out,
          round(sum(cost_usd::numeric), 9) AS cost_usd, count(*) FILTER (WHERE error_code IS NOT NULL) AS error_count`
        const key = q.group_by === "user"
          ? sql`user_id`
          : q.group_by === "model"
          ? sql`coalesce(model, '')`
          : q.group_by === "project"
          ? sql`coalesce(project_id, '')`
          : q.group_by === "adapter"
          ? sql`adapter`
          : sql`to_char(ts AT TIME ZONE ${timeZone}, 'YYYY-MM-DD')`
        // Days newest first; the others by cost, highest first, then by key (bytewise, as "C" orders).
        const page = q.group_by === "day"
          ? {
            where: after === undefined ? sql`true` : sql`key COLLATE "C" < ${after.k}`,
            orderBy: sql`ORDER BY key COLLATE "C" DESC`
          }
          : {
            where: after === undefined
              ? sql`true`
              : sql`(cost_usd < ${after.c!}::numeric OR (cost_usd = ${after.c!}::numeric AND key COLLATE "C" > ${after.k}))`,
            orderBy: sql`ORDER BY cost_usd DESC, key COLLATE "C" ASC`
          }
        const [rows, totals] = yield* Effect.all([
          sql<UsageRow>`SELECT * FROM (
              SELECT ${key} AS key, ${figures} FROM events WHERE ${where} GROUP BY 1
            ) g WHERE ${page.where} ${page.orderBy} LIMIT ${q.limit + 1}`,
          sql<UsageRow>`SELECT '' AS key, ${figures} FROM events WHERE ${where}`
        ], { concurrency: 2 }).pipe(Effect.orDie)
        const has_more = rows.length > q.limit
        const kept = has_more ? rows.slice(0, q.limit) : rows
        const last = kept[kept.length - 1]
        const nullable = q.group_by === "model" || q.group_by === "project"
        const data = kept.map((r): UsageGroup => ({ key: nullable && r.key === "" ? null : r.key, ...toTotals(r) }))
        return {
          group_by: q.group_by,
          from: iso(q.from),
          to: iso(q.to),
          time_zone: timeZone,
          totals: toTotals(totals[0]),
          data,
          cursor: has_more && last !== undefined
            ? encodeUsagePosition(q.group_by === "day" ? { g: q.group_by, k: last.key } : { g: q.group_by, k: last.key, c: typeof last.cost_usd === "number" ? last.cost_usd.toFixed(9) : String(last.cost_usd) })
            : "",
          has_more
        } satisfies UsageReport
      })

      return Activity.of({
        usage,
        listSessions,
        getSession,
        sessionSignals,
        listSessionEvents,
        listEvents,
        getEvent,
        listUserSessions
      })
    })
  )
}
