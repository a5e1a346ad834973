import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import {
  CursorOrderMismatch,
  type Event,
  EventNotFound,
  type Order,
  type Session,
  SessionNotFound,
  type StoredSignal,
  UnknownCursor,
  type UsageReport
} from "../domain/activity.ts"
import { decodePosition, encodePosition, type Position } from "../domain/keyset.ts"
import type { Page } from "../domain/pagination.ts"
import { type Count, type EventRow, num, type SessionRow, type SignalRow, toEvent, toSession, toSignal } from "./activity-rows.ts"
import { type Tenant, visibleUsers } from "./tenant-pages.ts"
import { makeUsage, type UsageQuery } from "./usage-repo.ts"

export type { UsageQuery } from "./usage-repo.ts"

export type { Tenant } from "./tenant-pages.ts"

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
export interface EventFilters extends SessionFilters {
  readonly session_id?: string | undefined
  readonly error_only?: boolean | undefined
  readonly action?: "block" | "warn" | "log" | "notify" | "redact" | undefined
  /** A finding kind: events whose metadata.findings holds one of it. */
  readonly finding?: string | undefined
  readonly has_findings?: boolean | undefined
  readonly type?: string | undefined
}

export interface SessionPage extends Page<Session> {
  readonly total: number
}

/** Why a cursor cannot continue a listing. */
type InvalidCursor = UnknownCursor | CursorOrderMismatch

/**
 * Where a list starts and in which direction it runs. A cursor carries the direction of the
 * listing it came from, so it continues that listing when `order` is not given; an `order`
 * that contradicts it is a 400.
 */
const resolvePage = (request: ListRequest): Effect.Effect<{ readonly order: Order; readonly after: Position | undefined }, InvalidCursor> => {
  if (request.cursor === undefined || request.cursor === "") {
    return Effect.succeed({ order: request.order ?? "desc", after: undefined })
  }
  const after = decodePosition(request.cursor)
  if (after === undefined) return Effect.fail(new UnknownCursor())
  if (request.order !== undefined && request.order !== after.order) return Effect.fail(new CursorOrderMismatch(after.order))
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
  readonly listSessions: (tenant: Tenant, filters: SessionFilters, request: ListRequest) => Effect.Effect<SessionPage, InvalidCursor>
  /** One session; with `userId`, only if it is that user's. */
  readonly getSession: (tenant: Tenant, sessionId: string, userId?: string) => Effect.Effect<Session, SessionNotFound>
  /** Every signal of a session, oldest first (the session is assumed to be the tenant's). */
  readonly sessionSignals: (tenant: Tenant, sessionId: string) => Effect.Effect<ReadonlyArray<StoredSignal>>
  readonly listSessionEvents: (
    tenant: Tenant,
    sessionId: string,
    request: ListRequest
  ) => Effect.Effect<Page<Event>, SessionNotFound | InvalidCursor>
  readonly listEvents: (tenant: Tenant, filters: EventFilters, request: ListRequest) => Effect.Effect<Page<Event>, InvalidCursor>
  readonly getEvent: (tenant: Tenant, eventId: string) => Effect.Effect<Event, EventNotFound>
  /** Usage in a time range, in total and by group (ordered by cost, or newest day first), a page of groups. */
  readonly usage: (tenant: Tenant, query: UsageQuery) => Effect.Effect<UsageReport, UnknownCursor>
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

      const sortAt = (column: string) => sql`to_char(${sql(column)} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sort_at`

      const sessionColumns = sql`id, user_id, adapter, client_session_id, project_id, started_at, last_activity_at,
        ended_at, end_reason, primary_model, models, tokens_in, tokens_out, cost_usd, signal_count, error_count,
        ${sortAt("started_at")}`

      const eventColumns = sql`id, signal_id, type, session_id, user_id, project_id, ts, adapter, model,
        tokens_in, tokens_out, latency_ms, cost_usd, error_code, verdict, metadata->'findings' AS findings, ${sortAt("ts")}`

      const inTenant = (tenant: Tenant) =>
        sql.and([sql`org_id = ${tenant.orgId}`, sql`environment = ${tenant.environment}`, ...visibleUsers(sql, tenant, "user_id")])

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
        if (!row) return yield* new SessionNotFound(sessionId)
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
        if (exists.length === 0) return yield* new SessionNotFound(sessionId)
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
          ...(f.type !== undefined ? [sql`type = ${f.type}`] : []),
          ...(f.finding !== undefined ? [sql`metadata->'findings' @> ${JSON.stringify([{ kind: f.finding }])}::jsonb`] : []),
          ...(f.has_findings === true ? [sql`jsonb_typeof(metadata->'findings') = 'array' AND metadata->'findings' <> '[]'::jsonb`] : [])
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
        if (!row) return yield* new EventNotFound(eventId)
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

      const usage = makeUsage(sql)

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
