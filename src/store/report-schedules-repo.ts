import { Clock, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../domain/ids.ts"
import type { Page } from "../domain/pagination.ts"
import {
  type ReportPeriod,
  type ReportSchedule,
  ReportScheduleInvalid,
  ReportScheduleNotFound,
  scheduleProblems
} from "../domain/report-schedules.ts"
import { nextDueAt } from "./report-periods.ts"
import { type PageRequest, type Tenant, tenantPage } from "./tenant-pages.ts"

interface ScheduleRow {
  readonly id: string
  readonly name: string
  readonly period: ReportPeriod
  readonly channel_ids: ReadonlyArray<string>
  readonly enabled: boolean
  readonly next_due_at: Date
  readonly last_sent_at: Date | null
  readonly created_at: Date
  readonly updated_at: Date | null
}
const columns = "id, name, period, channel_ids, enabled, next_due_at, last_sent_at, created_at, updated_at"
const iso = (d: Date) => new Date(d).toISOString()
const toSchedule = (r: ScheduleRow): ReportSchedule => ({
  id: r.id,
  name: r.name,
  period: r.period,
  channels: [...r.channel_ids],
  enabled: r.enabled,
  next_due_at: iso(r.next_due_at),
  last_sent_at: r.last_sent_at === null ? null : iso(r.last_sent_at),
  created_at: iso(r.created_at),
  updated_at: r.updated_at === null ? null : iso(r.updated_at)
})

export interface ScheduleInput {
  readonly name: string
  readonly period: ReportPeriod
  readonly channels: ReadonlyArray<string>
}

export interface SchedulePatch {
  readonly name?: string | undefined
  readonly period?: ReportPeriod | undefined
  readonly channels?: ReadonlyArray<string> | undefined
  readonly enabled?: boolean | undefined
}

type Problem = ReportScheduleInvalid

/**
 * Report schedules of a tenant (org and environment). `next_due_at` is set from the org's time
 * zone when a schedule is made or its period changes; the report job (report-claim.ts) moves it on.
 */
export class ReportSchedules extends Context.Service<ReportSchedules, {
  readonly create: (tenant: Tenant, input: ScheduleInput) => Effect.Effect<ReportSchedule, Problem>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<ReportSchedule>>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<ReportSchedule, ReportScheduleNotFound>
  readonly update: (tenant: Tenant, id: string, patch: SchedulePatch) => Effect.Effect<ReportSchedule, ReportScheduleNotFound | Problem>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, ReportScheduleNotFound>
}>()("signal-engine/store/ReportSchedules") {
  static readonly layer = Layer.effect(
    ReportSchedules,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const where = (tenant: Tenant, id: string) => sql`id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}`
      const textArray = (items: ReadonlyArray<string>) => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(items)}::jsonb))`
      const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

      /** The draft's problems (422), the channels' existence in the tenant included. */
      const check = Effect.fnUntraced(function*(tenant: Tenant, draft: { readonly name: string; readonly channels: ReadonlyArray<string> | undefined }) {
        const problems = [...scheduleProblems(draft)]
        if (draft.channels !== undefined && draft.channels.length > 0) {
          const found = yield* sql<{ readonly id: string }>`
            SELECT id FROM channels WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
              AND id IN ${sql.in([...draft.channels])}`.pipe(Effect.orDie)
          const missing = draft.channels.filter((c) => !found.some((f) => f.id === c))
          if (missing.length > 0) problems.push(`channels: no channel ${missing.join(", ")} in this environment`)
        }
        if (problems.length > 0) return yield* new ReportScheduleInvalid(problems)
      })

      const create = Effect.fn("ReportSchedules.create")(function*(tenant: Tenant, input: ScheduleInput) {
        const channels = [...new Set(input.channels)]
        yield* check(tenant, { name: input.name, channels })
        const rows = yield* sql<ScheduleRow>`
          INSERT INTO report_schedules (id, org_id, environment, name, period, channel_ids, next_due_at)
          SELECT ${makeId("rs")}, o.id, ${tenant.environment}, ${input.name.trim()}, ${input.period}, ${textArray(channels)},
            ${nextDueAt(sql, input.period, yield* now, "o.time_zone")}
          FROM orgs o WHERE o.id = ${tenant.orgId}
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        return toSchedule(rows[0]!)
      })

      const list = Effect.fn("ReportSchedules.list")(function*(tenant: Tenant, page: PageRequest) {
        return yield* tenantPage(sql, { table: "report_schedules", columns }, tenant, page, toSchedule)
      })

      const getRow = (tenant: Tenant, id: string) =>
        sql<ScheduleRow>`SELECT ${sql.literal(columns)} FROM report_schedules WHERE ${where(tenant, id)}`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => rows[0] === undefined ? Effect.fail(new ReportScheduleNotFound(id)) : Effect.succeed(rows[0]))
        )

      const get = Effect.fn("ReportSchedules.get")(function*(tenant: Tenant, id: string) {
        return toSchedule(yield* getRow(tenant, id))
      })

      const update = Effect.fn("ReportSchedules.update")(function*(tenant: Tenant, id: string, patch: SchedulePatch) {
        const current = yield* getRow(tenant, id)
        const channels = patch.channels === undefined ? current.channel_ids : [...new Set(patch.channels)]
        // Only channels sent are checked: one deleted since is skipped at send time, and should
        // not stop a rename or a pause.
        yield* check(tenant, { name: patch.name ?? current.name, channels: patch.channels === undefined ? undefined : channels })
        const period = patch.period ?? current.period
        // A new period starts counting from now; otherwise the due time stays where it was.
        const due = period === current.period
          ? sql`next_due_at`
          : sql`(SELECT ${nextDueAt(sql, period, yield* now, "o.time_zone")} FROM orgs o WHERE o.id = ${tenant.orgId})`
        const rows = yield* sql<ScheduleRow>`
          UPDATE report_schedules SET
            name = ${patch.name?.trim() ?? current.name},
            period = ${period},
            channel_ids = ${textArray(channels)},
            enabled = ${patch.enabled ?? current.enabled},
            next_due_at = ${due},
            updated_at = now()
          WHERE ${where(tenant, id)}
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new ReportScheduleNotFound(id)
        return toSchedule(rows[0]!)
      })

      const remove = Effect.fn("ReportSchedules.remove")(function*(tenant: Tenant, id: string) {
        const rows = yield* sql`DELETE FROM report_schedules WHERE ${where(tenant, id)} RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new ReportScheduleNotFound(id)
      })

      return ReportSchedules.of({ create, list, get, update, remove })
    })
  )
}
