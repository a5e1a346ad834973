import { Schema } from "effect"
import { NotFoundRefusal, Refusal } from "./refusal.ts"
import { Timestamp } from "./tenancy.ts"

/**
 * Scheduled spend reports: a summary of the org's spend over the last complete week or month,
 * sent to notification channels when the period ends in the org's time zone.
 */
export const ReportPeriod = Schema.Literals(["weekly", "monthly"])
export type ReportPeriod = typeof ReportPeriod.Type

/** The PostgreSQL `date_trunc` unit and interval of a period: weeks start on Monday (ISO 8601). */
export const periodUnit = (period: ReportPeriod): "week" | "month" => (period === "weekly" ? "week" : "month")

/** Most channels one schedule may name. */
export const maxReportChannels = 20

export const ReportSchedule = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix rs_" }),
  name: Schema.String,
  period: ReportPeriod.annotate({
    description: "weekly: Monday 00:00 to Monday 00:00; monthly: the 1st 00:00 to the next 1st; both in the org's time_zone"
  }),
  channels: Schema.Array(Schema.String).annotate({ description: "the notification channels (ch_…) the report goes to" }),
  enabled: Schema.Boolean,
  next_due_at: Timestamp.annotate({
    description: "when the next report is sent: the end of the current period in the org's time zone (set again after " +
      "each report, and when `period` changes)"
  }),
  last_sent_at: Schema.NullOr(Timestamp).annotate({ description: "when a report of this schedule was last queued" }),
  created_at: Timestamp,
  updated_at: Schema.NullOr(Timestamp)
}).annotate({ identifier: "ReportSchedule" })
export type ReportSchedule = typeof ReportSchedule.Type

/**
 * Field-level problems (422) that need no IO; whether the channels exist is checked by the store.
 * `channels` undefined: unchanged by an update, not checked.
 */
export const scheduleProblems = (draft: { readonly name: string; readonly channels: ReadonlyArray<string> | undefined }): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (draft.name.trim().length === 0) problems.push("name: must not be blank")
  if (draft.channels === undefined) return problems
  if (draft.channels.length === 0) problems.push("channels: name at least one channel (ch_…)")
  if (draft.channels.length > maxReportChannels) problems.push(`channels: at most ${maxReportChannels}`)
  return problems
}

export class ReportScheduleNotFound extends NotFoundRefusal("ReportScheduleNotFound", "report schedule") {}

export class ReportScheduleInvalid extends Refusal("ReportScheduleInvalid", 422, "validation_error") {
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("; "))
  }
}

/** One line of a report's top lists: who or what, with its spend and tokens. */
export interface ReportEntry {
  readonly label: string
  readonly cost_usd: number
  readonly tokens: number
}

export interface ReportTotals {
  readonly cost_usd: number
  readonly tokens: number
  readonly signals: number
  readonly sessions: number
}

/** What a report says: kept as its notification's facts (`data`), rendered per channel kind at send time. */
export interface SpendReport {
  readonly schedule_id: string
  readonly schedule_name: string
  readonly period: ReportPeriod
  readonly from: string
  readonly to: string
  readonly time_zone: string
  readonly totals: ReportTotals
  readonly previous: ReportTotals
  readonly top_users: ReadonlyArray<ReportEntry>
  readonly top_teams: ReadonlyArray<ReportEntry>
  readonly top_models: ReadonlyArray<ReportEntry>
}

/** How many entries each top list of a report has. */
export const reportTopN = 5
