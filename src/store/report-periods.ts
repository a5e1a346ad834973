import type { SqlClient } from "effect/sql"
import { periodUnit, type ReportPeriod } from "../domain/report-schedules.ts"

/**
 * Period boundaries in an org's time zone, computed by PostgreSQL (its time zone database knows
 * every offset change, DST included): the start of the period `now` falls in, as an instant.
 * `zone` is a SQL expression naming the IANA zone (the org's `time_zone` column).
 */
export const periodStart = (sql: SqlClient.SqlClient, period: ReportPeriod, now: Date, zone: string, shift: number) =>
  sql.literal(
    `((date_trunc('${periodUnit(period)}', '${now.toISOString()}'::timestamptz AT TIME ZONE ${zone}) + ` +
      `interval '${shift} ${periodUnit(period)}') AT TIME ZONE ${zone})`
  )

/** When a schedule's next report is due: the end of the period `now` falls in. */
export const nextDueAt = (sql: SqlClient.SqlClient, period: ReportPeriod, now: Date, zone: string) => periodStart(sql, period, now, zone, 1)
