import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { UnknownCursor } from "../domain/activity.ts"
import { isStorableText } from "../domain/text.ts"
import type { CoverageSource, CoverageTotals, CoverageUser } from "../domain/telemetry-views.ts"
import { iso } from "./activity-rows.ts"
import { type Tenant, visibleUsers } from "./tenant-pages.ts"

export interface CoverageQuery {
  /** The instant the report is as of (now), and how many days of silence is "stopped reporting". */
  readonly now: string
  readonly staleAfterDays: number
  readonly seenThrough?: CoverageSource | undefined
  readonly stoppedOnly?: boolean | undefined
  readonly limit: number
  readonly cursor: string | undefined
}

export interface CoverageReport {
  readonly as_of: string
  readonly stale_after_days: number
  readonly totals: CoverageTotals
  readonly data: ReadonlyArray<CoverageUser>
  readonly cursor: string
  readonly has_more: boolean
}

interface Row {
  readonly user_id: string
  readonly email: string
  readonly name: string
  readonly last_hook_at: Date | null
  readonly last_telemetry_at: Date | null
  readonly seen_through: CoverageSource
  readonly stopped_reporting: boolean
}

/**
 * How each user of an org is seen: the newest signal a hook adapter sent, the newest the tools'
 * own telemetry made (events whose metadata says `source: otel`, and productivity counters),
 * and whether both have been silent for the last N days.
 */
export class Coverage extends Context.Service<Coverage, {
  readonly report: (tenant: Tenant, query: CoverageQuery) => Effect.Effect<CoverageReport, UnknownCursor>
}>()("signal-engine/store/Coverage") {
  static readonly layer = Layer.effect(
    Coverage,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const report = Effect.fn("Coverage.report")(function*(tenant: Tenant, q: CoverageQuery) {
        const after = q.cursor === undefined || q.cursor === "" ? undefined : decode(q.cursor)
        if (q.cursor !== undefined && q.cursor !== "" && after === undefined) return yield* new UnknownCursor()
        const stale = sql`${q.now}::timestamptz - make_interval(days => ${q.staleAfterDays})`
        // Each newest-of is one backward walk of an index on (org, environment, user, ts).
        const seen = sql`
          SELECT u.id AS user_id, u.email, u.name, h.ts AS last_hook_at, greatest(o.ts, m.ts) AS last_telemetry_at
          FROM users u
          LEFT JOIN LATERAL (SELECT ts FROM events e WHERE e.org_id = u.org_id AND e.environment = ${tenant.environment}
            AND e.user_id = u.id AND e.metadata->>'source' IS DISTINCT FROM 'otel' ORDER BY ts DESC LIMIT 1) h ON true
          LEFT JOIN LATERAL (SELECT ts FROM events e WHERE e.org_id = u.org_id AND e.environment = ${tenant.environment}
            AND e.user_id = u.id AND e.metadata->>'source' = 'otel' ORDER BY ts DESC LIMIT 1) o ON true
          LEFT JOIN LATERAL (SELECT max(ts) AS ts FROM tool_metric_points p WHERE p.org_id = u.org_id
            AND p.environment = ${tenant.environment} AND p.user_id = u.id) m ON true
          WHERE ${sql.and([sql`u.org_id = ${tenant.orgId}`, ...visibleUsers(sql, tenant, "u.id")])}`
        const classified = sql`
          SELECT *, CASE WHEN last_hook_at IS NOT NULL AND last_telemetry_at IS NOT NULL THEN 'both'
              WHEN last_hook_at IS NOT NULL THEN 'hooks' WHEN last_telemetry_at IS NOT NULL THEN 'telemetry' ELSE 'none' END AS seen_through,
            coalesce(greatest(last_hook_at, last_telemetry_at) < ${stale}, false) AS stopped_reporting
          FROM (${seen}) s`
        const filters = sql.and([
          ...(after === undefined ? [] : [sql`user_id COLLATE "C" > ${after}`]),
          ...(q.seenThrough === undefined ? [] : [sql`seen_through = ${q.seenThrough}`]),
          ...(q.stoppedOnly === undefined ? [] : [sql`stopped_reporting = ${q.stoppedOnly}`])
        ])
        const [rows, totals] = yield* Effect.all([
          sql<Row>`SELECT * FROM (${classified}) c WHERE ${filters} ORDER BY user_id COLLATE "C" LIMIT ${q.limit + 1}`,
          sql<Record<keyof CoverageTotals, string>>`SELECT count(*) AS users,
              count(*) FILTER (WHERE seen_through = 'hooks') AS hooks, count(*) FILTER (WHERE seen_through = 'telemetry') AS telemetry,
              count(*) FILTER (WHERE seen_through = 'both') AS both, count(*) FILTER (WHERE seen_through = 'none') AS none,
              count(*) FILTER (WHERE stopped_reporting) AS stopped_reporting
            FROM (${classified}) c`
        ], { concurrency: 2 }).pipe(Effect.orDie)
        const has_more = rows.length > q.limit
        const kept = has_more ? rows.slice(0, q.limit) : rows
        const last = kept[kept.length - 1]
        const t = totals[0]
        return {
          as_of: iso(q.now),
          stale_after_days: q.staleAfterDays,
          totals: {
            users: Number(t?.users ?? 0),
            hooks: Number(t?.hooks ?? 0),
            telemetry: Number(t?.telemetry ?? 0),
            both: Number(t?.both ?? 0),
            none: Number(t?.none ?? 0),
            stopped_reporting: Number(t?.stopped_reporting ?? 0)
          },
          data: kept.map((r): CoverageUser => ({
            user_id: r.user_id,
            email: r.email,
            name: r.name,
            last_hook_at: r.last_hook_at === null ? null : iso(r.last_hook_at),
            last_telemetry_at: r.last_telemetry_at === null ? null : iso(r.last_telemetry_at),
            seen_through: r.seen_through,
            stopped_reporting: r.stopped_reporting
          })),
          cursor: has_more && last !== undefined ? Buffer.from(last.user_id).toString("base64url") : "",
          has_more
        } satisfies CoverageReport
      })

      return { report }
    })
  )
}

const decode = (cursor: string): string | undefined => {
  const k = Buffer.from(cursor, "base64url").toString("utf8")
  return k !== "" && isStorableText(k) ? k : undefined
}
