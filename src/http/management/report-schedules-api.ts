import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { NotFound, Unprocessable } from "../../domain/errors.ts"
import { maxReportChannels, ReportPeriod, ReportSchedule } from "../../domain/report-schedules.ts"
import { getEndpoint, IdParams, listEndpoint, managementGroup, Name, requires } from "./endpoints.ts"

// The count is checked by the repository, so that too many is a 422 rather than a 400.
const Channels = Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(100))).annotate({
  description: `1 to ${maxReportChannels} notification channel ids (ch_…) of the key's environment; unknown ids are 422`
})

const CreateSchedule = Schema.Struct({ name: Name, period: ReportPeriod, channels: Channels })

const UpdateSchedule = Schema.Struct({
  name: Schema.optionalKey(Name),
  period: Schema.optionalKey(ReportPeriod.annotate({ description: "a new period also sets next_due_at to the end of the current one" })),
  channels: Schema.optionalKey(Channels),
  enabled: Schema.optionalKey(Schema.Boolean.annotate({ description: "false: no report is sent until it is true again" }))
}).annotate({ description: "only the fields sent change; unknown fields are rejected (400)" })

export class ReportSchedulesGroup extends HttpApiGroup.make("reportSchedules")
  .add(
    listEndpoint("/report-schedules", ReportSchedule).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.post("create", "/report-schedules", {
      payload: CreateSchedule,
      success: ReportSchedule.pipe(HttpApiSchema.status(201)),
      error: Unprocessable
    }).annotateMerge(requires(
      "admin",
      "write",
      "Creates a schedule of the key's environment; its first report is due at the end of the current period. 422 " +
        "validation_error for a blank name or channels that are not channels of the environment."
    )),
    getEndpoint("/report-schedules/:id", ReportSchedule).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.patch("update", "/report-schedules/:id", {
      params: IdParams,
      payload: UpdateSchedule,
      success: ReportSchedule,
      error: [NotFound, Unprocessable]
    }).annotateMerge(requires("admin", "write", "Changes a schedule.")),
    HttpApiEndpoint.delete("delete", "/report-schedules/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: NotFound })
      .annotateMerge(requires("admin", "write", "Deletes the schedule; reports already queued are still sent."))
  )
  .pipe(managementGroup({
    title: "Report schedules",
    description: "Spend reports sent to notification channels when a week (Monday to Monday) or a month ends in the org's " +
      "time_zone: the period's spend, tokens, signals and sessions, the change against the period before, and the top 5 " +
      "users, teams and models by spend (figures as GET /usage computes them). Every node polls for due schedules " +
      "(REPORT_POLL_INTERVAL); each report is queued once, in the channels' outbox, and delivered with its retries."
  }))
{}
