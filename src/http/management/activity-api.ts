import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Event, Session, SessionDetail, UsageGroup, UsageGroupBy, UsageTotals } from "../../domain/activity.ts"
import { NotFound, Unprocessable } from "../../domain/errors.ts"
import { ActivityPageQuery, pageOf } from "../contract.ts"
import { getEndpoint, IdParams, managementGroup, requires } from "./endpoints.ts"
import { matching } from "../../domain/text.ts"
import { BooleanParam, instantParam, OrderParam } from "../query.ts"

const optionalText = (description: string) => Schema.optional(Schema.String.annotate({ description }))

/** The filters the activity lists and the usage report share: whose, where and with what. */
const whose = (noun: "sessions" | "events", model: string) => ({
  user_id: optionalText(`only this user's ${noun}`),
  project_id: optionalText(`only ${noun} of this project`),
  model: optionalText(model),
  adapter: optionalText("adapter name")
})

/** A time range of the activity lists: `from` inclusive, `to` exclusive. */
const between = (what: string) => ({
  from: Schema.optional(instantParam(`${what} at or after this instant`)),
  to: Schema.optional(instantParam(`${what} before this instant`))
})

const OrderQuery = {
  order: Schema.optional(OrderParam.annotate({
    description: "`desc` (default, newest first) or `asc`. A cursor continues the order it was made in."
  }))
}

const SessionsPage = Schema.Struct({
  ...pageOf(Session).fields,
  total: Schema.Int.annotate({ description: "number of sessions matching the filters (all pages)" })
})

export class SessionsGroup extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.get("list", "/sessions", {
      query: { ...whose("sessions", "primary model, exact match"), ...between("sessions started"), ...ActivityPageQuery, ...OrderQuery },
      success: SessionsPage
    }).annotateMerge(requires("sessions", "read", "Sessions by start time, newest first unless order=asc.")),
    getEndpoint("/sessions/:id", SessionDetail)
      .annotateMerge(requires("sessions", "read", "One session with all its signals (`signals`, oldest first).")),
    HttpApiEndpoint.get("events", "/sessions/:id/events", {
      params: IdParams,
      query: { ...ActivityPageQuery, ...OrderQuery },
      success: pageOf(Event),
      error: NotFound
    }).annotateMerge(requires("sessions", "read", "The session's events, newest first unless order=asc."))
  )
  .pipe(managementGroup({
    title: "Sessions",
    description: "Windows of activity of one user with one adapter. ended_at is null while a session is open."
  }))
{}

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events", {
      query: {
        session_id: optionalText("only events of this session"),
        ...whose("events", "model, exact match"),
        ...between("events"),
        error_only: Schema.optional(BooleanParam.annotate({ description: "`true`: only events with a non-null error_code" })),
        type: optionalText("signal type, exact match (e.g. goal-drift)"),
        finding: Schema.optional(
          Schema.String.pipe(Schema.check(matching(/^[a-z0-9][a-z0-9_]{0,99}$/, "a finding kind: lowercase letters, digits and _"))).annotate({
            description: "Extension: only events with a finding of this kind (e.g. aws_access_token, an org's custom kind)"
          })
        ),
        has_findings: Schema.optional(BooleanParam.annotate({ description: "Extension: `true`: only events with findings (secrets found)" })),
        action: Schema.optional(
          Schema.Literals(["block", "warn", "log", "notify", "redact"]).annotate({
            description: "only events a rule gave this action (the verdict's `action`)"
          })
        ),
        ...ActivityPageQuery
      },
      success: pageOf(Event)
    }).annotateMerge(requires("events", "read", "Events (accepted signals), newest first.")),
    getEndpoint("/events/:id", Event).annotateMerge(requires(
      "events",
      "read",
      "One event, by its id (evt_…) or by the id of its signal (sig_…, as POST /engine/v1/signals answered it)."
    ))
  )
  .pipe(managementGroup({ title: "Events", description: "One event per accepted signal; immutable." }))
{}

export const UsageReportSchema = Schema.Struct({
  group_by: UsageGroupBy,
  from: Schema.String.annotate({ description: "the range's start (inclusive), ISO 8601" }),
  to: Schema.String.annotate({ description: "the range's end (exclusive), ISO 8601" }),
  time_zone: Schema.String.annotate({ description: "the org's time zone, which days are counted in" }),
  totals: UsageTotals.annotate({ description: "the whole range, over every group (all pages)" }),
  ...pageOf(UsageGroup).fields
})

export class UsageGroupApi extends HttpApiGroup.make("usage")
  .add(
    HttpApiEndpoint.get("report", "/usage", {
      query: {
        group_by: Schema.optional(UsageGroupBy.annotate({ description: "`user` (default), `model`, `project`, `adapter` or `day`" })),
        from: Schema.optional(instantParam("events at or after this instant (default: 30 days before `to`)")),
        to: Schema.optional(instantParam("events before this instant (default: now)")),
        ...whose("events", "model, exact match"),
        ...ActivityPageQuery
      },
      success: UsageReportSchema,
      error: Unprocessable
    }).annotateMerge(requires(
      "events",
      "read",
      "Extension: tokens, cost, signals, sessions and errors in a time range, in total and per user, " +
        "model, project, adapter or day (in the org's time zone). Groups come by cost, highest first (days: newest " +
        "first), a page at a time; `totals` covers every group. Computed when asked from the events, so a range " +
        "that ends in the past gives the same answer every time."
    ))
  )
  .pipe(managementGroup({
    title: "Usage",
    description: "Usage reports over the events: who and what spent how much."
  }))
{}
