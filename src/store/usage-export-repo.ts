import { Context, Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { ExportDimension, ExportRow } from "../domain/usage-export.ts"
import { type Count, num } from "./activity-rows.ts"
import { type Tenant, visibleUsers } from "./tenant-pages.ts"

/** An export's question: instants normalized (parseInstant), `from` before `to`. */
export interface ExportQuery {
  readonly dimensions: ReadonlyArray<ExportDimension>
  readonly from: string
  readonly to: string
  readonly user_id?: string | undefined
  readonly team_id?: string | undefined
  readonly project_id?: string | undefined
  readonly model?: string | undefined
}

/** An export about to be read: the org's time zone (the days' zone) and its rows, read as they are pulled. */
export interface UsageExport {
  readonly timeZone: string
  readonly rows: Stream.Stream<ExportRow>
}

/** A row as the driver reads it: the dimensions as exported, the figures as PostgreSQL answers them. */
interface Row extends Omit<ExportRow, "signals" | "sessions" | "tokens_in" | "tokens_out" | "cost_usd" | "error_count"> {
  readonly signals: Count
  readonly sessions: Count
  readonly tokens_in: Count | null
  readonly tokens_out: Count | null
  readonly cost_usd: string | number | null
  readonly error_count: Count
}

const toExportRow = (r: Row): ExportRow => ({
  ...r,
  signals: num(r.signals),
  sessions: num(r.sessions),
  tokens_in: num(r.tokens_in ?? 0),
  tokens_out: num(r.tokens_out ?? 0),
  cost_usd: Number(r.cost_usd ?? 0),
  error_count: num(r.error_count)
})

export class UsageExports extends Context.Service<UsageExports, {
  /**
   * Usage grouped by the dimensions (at least one), in their order (days oldest first, then by id), aggregated by
   * PostgreSQL and streamed from it: the rows cross the process a chunk at a time, read only as
   * fast as the consumer pulls them, so memory does not grow with the range. Interrupting the
   * stream cancels the query.
   */
  readonly open: (tenant: Tenant, query: ExportQuery) => Effect.Effect<UsageExport>
}>()("signal-engine/store/UsageExports") {
  static readonly layer = Layer.effect(
    UsageExports,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const open = Effect.fn("UsageExports.open")(function*(tenant: Tenant, q: ExportQuery) {
        const zones = yield* sql<{ readonly time_zone: string }>`SELECT time_zone FROM orgs WHERE id = ${tenant.orgId}`
          .pipe(Effect.orDie)
        const timeZone = zones[0]?.time_zone ?? "UTC"
        const has = (d: ExportDimension) => q.dimensions.includes(d)
        // Teams are the user's teams now (events do not keep them): a user in two teams counts in
        // both, one in none in the empty team. Without the team dimension a team filter is a
        // membership test, so nothing is counted twice.
        const teamJoin = has("team") ? sql`LEFT JOIN team_members tm ON tm.user_id = e.user_id` : sql``
        const where = sql.and([
          sql`e.org_id = ${tenant.orgId}`,
          sql`e.environment = ${tenant.environment}`,
          ...visibleUsers(sql, tenant, "e.user_id"),
          sql`e.ts >= ${q.from}::timestamptz`,
          sql`e.ts < ${q.to}::timestamptz`,
          ...(q.user_id !== undefined ? [sql`e.user_id = ${q.user_id}`] : []),
          ...(q.project_id !== undefined ? [sql`e.project_id = ${q.project_id}`] : []),
          ...(q.model !== undefined ? [sql`e.model = ${q.model}`] : []),
          ...(q.team_id === undefined
            ? []
            : has("team")
            ? [sql`tm.team_id = ${q.team_id}`]
            : [sql`e.user_id IN (SELECT user_id FROM team_members WHERE team_id = ${q.team_id})`])
        ])
        const keys = [
          ...(has("day") ? [sql`to_char(e.ts AT TIME ZONE ${timeZone}, 'YYYY-MM-DD') AS day`] : []),
          ...(has("user") ? [sql`e.user_id`] : []),
          ...(has("team") ? [sql`tm.team_id`] : []),
          ...(has("project") ? [sql`e.project_id`] : []),
          ...(has("model") ? [sql`e.model`] : [])
        ]
        const names = [
          ...(has("user") ? [sql`u.email AS user_email, u.name AS user_name`] : []),
          ...(has("team") ? [sql`t.name AS team_name`] : []),
          ...(has("project") ? [sql`p.name AS project_name`] : [])
        ]
        const joins = [
          ...(has("user") ? [sql`LEFT JOIN users u ON u.id = g.user_id`] : []),
          ...(has("team") ? [sql`LEFT JOIN teams t ON t.id = g.team_id`] : []),
          ...(has("project") ? [sql`LEFT JOIN projects p ON p.id = g.project_id AND p.org_id = ${tenant.orgId}`] : [])
        ]
        // Days oldest first, ids bytewise (as "C" orders), rows without a project or model first.
        const order = q.dimensions.map((d) => sql`g.${sql(d === "day" || d === "model" ? d : `${d}_id`)} COLLATE "C" NULLS FIRST`)
        const groups = keys.map((_, i) => sql.literal(String(i + 1)))
        // Costs summed as exact decimals, as the usage report does, so both give the same figures.
        const statement = sql<Row>`SELECT ${sql.csv(["g.*", ...names])} FROM (
            SELECT ${sql.csv(keys)},
              count(*) AS signals, count(DISTINCT e.session_id) AS sessions,
              sum(e.tokens_in) AS tokens_in, sum(e.tokens_out) AS tokens_out,
              round(sum(e.cost_usd::numeric), 9) AS cost_usd,
              count(*) FILTER (WHERE e.error_code IS NOT NULL) AS error_count
            FROM events e ${teamJoin} WHERE ${where}
            GROUP BY ${sql.csv(groups)}
          ) g ${sql.join(" ", false)(joins)}
          ORDER BY ${sql.csv(order)}`
        return { timeZone, rows: statement.stream.pipe(Stream.map(toExportRow), Stream.orDie) } satisfies UsageExport
      })

      return UsageExports.of({ open })
    })
  )
}
