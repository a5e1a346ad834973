import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { UnknownCursor, type UsageGroup, type UsageGroupBy, type UsageReport, type UsageTotals } from "../domain/activity.ts"
import { isStorableText } from "../domain/text.ts"
import { type Count, iso, num } from "./activity-rows.ts"
import { type Tenant, visibleUsers } from "./tenant-pages.ts"

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
  readonly secret_findings: Count | null
}

const toTotals = (r: UsageRow | undefined): UsageTotals => ({
  signals: num(r?.signals ?? 0),
  sessions: num(r?.sessions ?? 0),
  tokens_in: num(r?.tokens_in ?? 0),
  tokens_out: num(r?.tokens_out ?? 0),
  cost_usd: Number(r?.cost_usd ?? 0),
  error_count: num(r?.error_count ?? 0),
  secret_findings: num(r?.secret_findings ?? 0)
})

/** Usage in a time range, in total and by group (ordered by cost, or newest day first), a page of groups. */
export const makeUsage = (sql: SqlClient.SqlClient) => {
  const inTenant = (tenant: Tenant) =>
    sql.and([sql`org_id = ${tenant.orgId}`, sql`environment = ${tenant.environment}`, ...visibleUsers(sql, tenant, "user_id")])

  const usage = Effect.fn("Activity.usage")(function*(tenant: Tenant, q: UsageQuery) {
    const after = q.cursor === undefined || q.cursor === "" ? undefined : decodeUsagePosition(q.cursor, q.group_by)
    if (q.cursor !== undefined && q.cursor !== "" && after === undefined) return yield* new UnknownCursor()
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
      round(sum(cost_usd::numeric), 9) AS cost_usd, count(*) FILTER (WHERE error_code IS NOT NULL) AS error_count,
      sum(jsonb_array_length(metadata->'findings')) FILTER (WHERE jsonb_typeof(metadata->'findings') = 'array') AS secret_findings`
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
        ? encodeUsagePosition(
          q.group_by === "day"
            ? { g: q.group_by, k: last.key }
            : { g: q.group_by, k: last.key, c: typeof last.cost_usd === "number" ? last.cost_usd.toFixed(9) : String(last.cost_usd) }
        )
        : "",
      has_more
    } satisfies UsageReport
  })

  return usage
}
