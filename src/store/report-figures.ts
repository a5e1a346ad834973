import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { UsageTotals } from "../domain/activity.ts"
import { type ReportEntry, type ReportTotals, reportTopN } from "../domain/report-schedules.ts"
import { num } from "./activity-rows.ts"
import type { Tenant } from "./tenant-pages.ts"
import { makeUsage } from "./usage-repo.ts"

/**
 * A report's figures over [from, to): totals, and the top users, teams and models by spend. Users
 * and models come from the usage endpoint's query (GET /usage), so a report and the API agree;
 * teams count a user in the teams it is in now, as the usage export's team dimension does.
 */
export const reportFigures = (sql: SqlClient.SqlClient) => {
  const usage = makeUsage(sql)
  const totalsOf = (t: UsageTotals): ReportTotals => ({
    cost_usd: t.cost_usd,
    tokens: t.tokens_in + t.tokens_out,
    signals: t.signals,
    sessions: t.sessions
  })
  const grouped = (tenant: Tenant, groupBy: "user" | "model", from: string, to: string) =>
    usage(tenant, { group_by: groupBy, from, to, limit: reportTopN, cursor: undefined }).pipe(Effect.orDie)

  const teams = (tenant: Tenant, from: string, to: string) =>
    sql<{ readonly label: string; readonly cost_usd: string | number | null; readonly tokens: string | number | null }>`
      SELECT t.name AS label, round(sum(e.cost_usd::numeric), 9) AS cost_usd,
        sum(coalesce(e.tokens_in, 0) + coalesce(e.tokens_out, 0)) AS tokens
      FROM events e JOIN team_members tm ON tm.user_id = e.user_id JOIN teams t ON t.id = tm.team_id
      WHERE e.org_id = ${tenant.orgId} AND e.environment = ${tenant.environment}
        AND e.ts >= ${from}::timestamptz AND e.ts < ${to}::timestamptz
      GROUP BY t.id, t.name ORDER BY 2 DESC, t.name COLLATE "C" LIMIT ${reportTopN}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows.map((r): ReportEntry => ({ label: r.label, cost_usd: Number(r.cost_usd ?? 0), tokens: num(r.tokens ?? 0) })))
    )

  /** Users as people know them: name and e-mail. */
  const userLabels = (ids: ReadonlyArray<string>) =>
    ids.length === 0 ? Effect.succeed(new Map<string, string>()) : sql<{ readonly id: string; readonly label: string }>`
      SELECT id, name || ' <' || email || '>' AS label FROM users WHERE id IN ${sql.in([...ids])}`.pipe(
      Effect.orDie,
      Effect.map((rows) => new Map(rows.map((r) => [r.id, r.label])))
    )

  return Effect.fnUntraced(function*(tenant: Tenant, period: { readonly from: string; readonly to: string; readonly previousFrom: string }) {
    const users = yield* grouped(tenant, "user", period.from, period.to)
    const models = yield* grouped(tenant, "model", period.from, period.to)
    const previous = yield* grouped(tenant, "model", period.previousFrom, period.from)
    const labels = yield* userLabels(users.data.map((u) => u.key ?? ""))
    const entry = (label: string, t: UsageTotals): ReportEntry => ({ label, cost_usd: t.cost_usd, tokens: t.tokens_in + t.tokens_out })
    return {
      totals: totalsOf(users.totals),
      previous: totalsOf(previous.totals),
      top_users: users.data.map((u) => entry(labels.get(u.key ?? "") ?? u.key ?? "", u)),
      top_teams: yield* teams(tenant, period.from, period.to),
      top_models: models.data.map((m) => entry(m.key ?? "(no model)", m))
    }
  })
}
