import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownCursor } from "../domain/activity.ts"
import { isStorableText } from "../domain/text.ts"
import type { ProductivityFigures, ProductivityGroup, ProductivityGroupBy } from "../domain/telemetry-views.ts"
import type { ToolMetricPoint } from "../domain/tool-metrics.ts"
import { iso } from "./activity-rows.ts"
import { type Tenant, visibleUsers } from "./tenant-pages.ts"

export interface ProductivityQuery {
  readonly group_by: ProductivityGroupBy
  readonly from: string
  readonly to: string
  readonly user_id?: string | undefined
  readonly limit: number
  readonly cursor: string | undefined
}

export interface ProductivityReport {
  readonly group_by: ProductivityGroupBy
  readonly from: string
  readonly to: string
  readonly totals: ProductivityFigures
  readonly data: ReadonlyArray<ProductivityGroup>
  readonly cursor: string
  readonly has_more: boolean
}

const encodeCursor = (g: ProductivityGroupBy, k: string) => Buffer.from(JSON.stringify({ g, k })).toString("base64url")
const decodeCursor = (cursor: string, g: ProductivityGroupBy): string | undefined => {
  try {
    const p = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { g?: unknown; k?: unknown }
    return p.g === g && typeof p.k === "string" && isStorableText(p.k) ? p.k : undefined
  } catch {
    return undefined
  }
}

type Row = { readonly key: string; readonly name: string } & Record<keyof ProductivityFigures, string | number | null>

const figuresOf = (r: Row | undefined): ProductivityFigures => {
  const n = (v: string | number | null | undefined) => Number(v ?? 0)
  return {
    lines_added: n(r?.lines_added),
    lines_removed: n(r?.lines_removed),
    commits: n(r?.commits),
    pull_requests: n(r?.pull_requests),
    edits_accepted: n(r?.edits_accepted),
    edits_rejected: n(r?.edits_rejected),
    cost_usd: n(r?.cost_usd),
    tokens_in: n(r?.tokens_in),
    tokens_out: n(r?.tokens_out),
    sessions: n(r?.sessions)
  }
}

/**
 * The tools' productivity counters: kept point by point (a resent point is the same row, so it
 * adds nothing), read as per-user figures beside the events' spend.
 */
export class ToolMetrics extends Context.Service<ToolMetrics, {
  /** Keeps a user's points; those already kept (a resend) are left as they are. */
  readonly record: (tenant: Tenant, userId: string, points: ReadonlyArray<ToolMetricPoint>) => Effect.Effect<void>
  readonly productivity: (tenant: Tenant, query: ProductivityQuery) => Effect.Effect<ProductivityReport, UnknownCursor>
}>()("signal-engine/store/ToolMetrics") {
  static readonly layer = Layer.effect(
    ToolMetrics,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const inTenant = (tenant: Tenant) => sql`org_id = ${tenant.orgId} AND environment = ${tenant.environment}`

      const record = Effect.fn("ToolMetrics.record")(function*(tenant: Tenant, userId: string, points: ReadonlyArray<ToolMetricPoint>) {
        if (points.length === 0) return
        const rows = points.map((p) => ({
          org_id: tenant.orgId,
          environment: tenant.environment,
          user_id: userId,
          series: p.series,
          start_ns: p.startNs,
          time_ns: p.timeNs,
          // Milliseconds are enough to place a point in a day; the key keeps the nanoseconds.
          ts: new Date(Number(BigInt(p.timeNs) / 1_000_000n)).toISOString(),
          tool: p.tool,
          figure: p.figure,
          cumulative: p.cumulative,
          value: p.value
        }))
        yield* sql`INSERT INTO tool_metric_points ${
          sql.insert(rows as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>])
        } ON CONFLICT DO NOTHING`.pipe(Effect.orDie)
      })

      /** Each point's contribution: a delta point its value; a cumulative one what it added to its series' total. */
      const increments = (tenant: Tenant, q: ProductivityQuery) =>
        sql`SELECT user_id, figure, ts,
            CASE WHEN NOT cumulative THEN value WHEN prev IS NULL OR value < prev THEN value ELSE value - prev END AS inc
          FROM (
            SELECT *, lag(value) OVER (PARTITION BY user_id, series, start_ns ORDER BY time_ns) AS prev
            FROM tool_metric_points
            WHERE ${inTenant(tenant)} AND ts < ${q.to}::timestamptz
              AND (user_id, series, start_ns) IN (
                SELECT user_id, series, start_ns FROM tool_metric_points
                WHERE ${inTenant(tenant)} AND ts >= ${q.from}::timestamptz AND ts < ${q.to}::timestamptz
              )
          ) w`

      const perUser = (tenant: Tenant, q: ProductivityQuery) => {
        const figure = (name: string) => sql`sum(inc) FILTER (WHERE figure = ${name})`
        // The user asked for, among those the caller may see (a team lead's teams, a member alone).
        const onlyUser = sql.and([...(q.user_id === undefined ? [] : [sql`user_id = ${q.user_id}`]), ...visibleUsers(sql, tenant, "user_id")])
        return sql`
          WITH figures AS (
            SELECT user_id, ${figure("lines_added")} AS lines_added, ${figure("lines_removed")} AS lines_removed,
              ${figure("commits")} AS commits, ${figure("pull_requests")} AS pull_requests,
              ${figure("edits_accepted")} AS edits_accepted, ${figure("edits_rejected")} AS edits_rejected
            FROM (${increments(tenant, q)}) i WHERE ts >= ${q.from}::timestamptz AND ${onlyUser} GROUP BY user_id
          ), spend AS (
            SELECT user_id, round(sum(cost_usd::numeric), 9) AS cost_usd, sum(tokens_in) AS tokens_in,
              sum(tokens_out) AS tokens_out, count(DISTINCT session_id) AS sessions
            FROM events WHERE ${inTenant(tenant)} AND ts >= ${q.from}::timestamptz AND ts < ${q.to}::timestamptz AND ${onlyUser}
            GROUP BY user_id
          )
          SELECT * FROM figures FULL JOIN spend USING (user_id)`
      }

      const sums = sql`sum(lines_added) AS lines_added, sum(lines_removed) AS lines_removed, sum(commits) AS commits,
        sum(pull_requests) AS pull_requests, sum(edits_accepted) AS edits_accepted, sum(edits_rejected) AS edits_rejected,
        sum(cost_usd) AS cost_usd, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(sessions) AS sessions`

      const productivity = Effect.fn("ToolMetrics.productivity")(function*(tenant: Tenant, q: ProductivityQuery) {
        const after = q.cursor === undefined || q.cursor === "" ? undefined : decodeCursor(q.cursor, q.group_by)
        if (q.cursor !== undefined && q.cursor !== "" && after === undefined) return yield* new UnknownCursor()
        const users = perUser(tenant, q)
        // A user in several teams counts in each; one in none is in no team's row (but in `totals`).
        const groups = q.group_by === "user"
          ? sql`SELECT u.id AS key, u.name, ${sums} FROM (${users}) p JOIN users u ON u.id = p.user_id GROUP BY u.id, u.name`
          : sql`SELECT t.id AS key, t.name, ${sums} FROM (${users}) p
              JOIN team_members m ON m.user_id = p.user_id JOIN teams t ON t.id = m.team_id GROUP BY t.id, t.name`
        const page = after === undefined ? sql`true` : sql`key COLLATE "C" > ${after}`
        const [rows, totals] = yield* Effect.all([
          sql<Row>`SELECT * FROM (${groups}) g WHERE ${page} ORDER BY key COLLATE "C" LIMIT ${q.limit + 1}`,
          sql<Row>`SELECT '' AS key, '' AS name, ${sums} FROM (${users}) p`
        ], { concurrency: 2 }).pipe(Effect.orDie)
        const has_more = rows.length > q.limit
        const kept = has_more ? rows.slice(0, q.limit) : rows
        const last = kept[kept.length - 1]
        return {
          group_by: q.group_by,
          from: iso(q.from),
          to: iso(q.to),
          totals: figuresOf(totals[0]),
          data: kept.map((r): ProductivityGroup => ({ key: r.key, name: r.name, ...figuresOf(r) })),
          cursor: has_more && last !== undefined ? encodeCursor(q.group_by, last.key) : "",
          has_more
        } satisfies ProductivityReport
      })

      return { record, productivity }
    })
  )
}
