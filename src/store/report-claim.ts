import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import type { ReportPeriod, SpendReport } from "../domain/report-schedules.ts"
import { reportFigures } from "./report-figures.ts"
import { periodStart } from "./report-periods.ts"

interface DueRow {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly name: string
  readonly period: ReportPeriod
  readonly channel_ids: ReadonlyArray<string>
  readonly time_zone: string
}

/** How many due schedules one transaction takes. */
const batchSize = 10

/**
 * Takes the schedules due at `now` (SKIP LOCKED: each is one node's, whichever nodes poll) and,
 * in the same transaction, queues each one's report in the channel outbox and moves its
 * `next_due_at` to the end of the current period. A report covers the last complete period
 * before `now` in the org's time zone; its message ids are hashes of schedule, period and
 * channel, so even a report built twice is queued once. Answers how many schedules it took.
 */
export const claimDueReports = (now: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const figures = reportFigures(sql)
    return yield* sql.withTransaction(Effect.gen(function*() {
      const due = yield* sql<DueRow>`
        SELECT s.id, s.org_id, s.environment, s.name, s.period, s.channel_ids, o.time_zone
        FROM report_schedules s JOIN orgs o ON o.id = s.org_id
        WHERE s.enabled AND s.next_due_at <= ${now.toISOString()}::timestamptz
        ORDER BY s.next_due_at LIMIT ${batchSize}
        FOR UPDATE OF s SKIP LOCKED`
      for (const s of due) {
        const bounds = (yield* sql<{ readonly previous_from: Date; readonly from: Date; readonly to: Date; readonly next: Date }>`
          SELECT ${periodStart(sql, s.period, now, "z.tz", -2)} AS previous_from, ${periodStart(sql, s.period, now, "z.tz", -1)} AS from,
            ${periodStart(sql, s.period, now, "z.tz", 0)} AS to, ${periodStart(sql, s.period, now, "z.tz", 1)} AS next
          FROM (SELECT ${s.time_zone}::text AS tz) z`)[0]!
        const period = { previousFrom: iso(bounds.previous_from), from: iso(bounds.from), to: iso(bounds.to) }
        const tenant = { orgId: s.org_id, environment: s.environment }
        const report: SpendReport = {
          schedule_id: s.id,
          schedule_name: s.name,
          period: s.period,
          from: period.from,
          to: period.to,
          time_zone: s.time_zone,
          ...(yield* figures(tenant, period))
        }
        const facts = JSON.stringify({ type: "report.spend", ts: period.to, data: report })
        // A disabled or deleted channel gets nothing, as for notify rules.
        yield* sql`
          INSERT INTO notifications (id, channel_id, org_id, environment, type, facts, firings, summary, next_attempt_at)
          SELECT 'ntf_' || left(encode(sha256(convert_to(${`${s.id}:${period.from}:`} || c.id, 'UTF8')), 'hex'), 32),
            c.id, c.org_id, c.environment, 'report.spend', ${facts}::jsonb, 1, false, now()
          FROM channels c
          WHERE c.org_id = ${s.org_id} AND c.environment = ${s.environment} AND c.enabled
            AND c.id = ANY(${sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(s.channel_ids)}::jsonb))`})
          ON CONFLICT (id) DO NOTHING`
        yield* sql`
          UPDATE report_schedules SET next_due_at = ${iso(bounds.next)}::timestamptz, last_sent_at = ${now.toISOString()}::timestamptz
          WHERE id = ${s.id}`
      }
      return due.length
    }))
  })

const iso = (d: Date | string) => new Date(d).toISOString()
