import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Event, Session, SessionDetail, UsageGroup, UsageGroupBy, UsageTotals } from "../../domain/activity.ts"
import { NotFound, Unprocessable } from "../../domain/errors.ts"
import { ActivityPageQuery, Envelope, ManagementAuth, pageOf, RequiredScope } from "../contract.ts"
import { BooleanParam, instantParam, OrderParam } from "../query.ts"

const Id = { id: Schema.String }

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
      query: {
        user_id: Schema.optional(Schema.String.annotate({ description: "only this user's sessions" })),
        project_id: Schema.optional(Schema.String.annotate({ description: "only sessions of this project" })),
        model: Schema.optional(Schema.String.annotate({ description: "primary model, exact match" })),
        adapter: Schema.optional(Schema.String.annotate({ description: "adapter name" })),
        from: Schema.optional(instantParam("sessions started at or after this instant")),
        to: Schema.optional(instantParam("sessions started before this instant")),
        ...ActivityPageQuery,
        ...OrderQuery
      },
      success: SessionsPage
    })
      .annotate(RequiredScope, { resource: "sessions", access: "read" })
      .annotateMerge(OpenApi.annotations({ description: "Sessions by start time, newest first unless order=asc." })),
    HttpApiEndpoint.get("get", "/sessions/:id", { params: Id, success: SessionDetail, error: NotFound })
      .annotate(RequiredScope, { resource: "sessions", access: "read" })
      .annotateMerge(OpenApi.annotations({ description: "One session with all its signals (`signals`, oldest first)." })),
    HttpApiEndpoint.get("events", "/sessions/:id/events", {
      params: Id,
      query: { ...ActivityPageQuery, ...OrderQuery },
      success: pageOf(Event),
      error: NotFound
    })
      .annotate(RequiredScope, { resource: "sessions", access: "read" })
      .annotateMerge(OpenApi.annotations({ description: "The session's events, newest first unless order=asc." }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({
    title: "Sessions",
    description: "Windows of activity of one user with one adapter. ended_at is null while a session is open."
  }))
{}

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.get("list", "/events", {
      query: {
        session_id: Schema.optional(Schema.String.annotate({ description: "only events of this session" })),
        user_id: Schema.optional(Schema.String.annotate({ description: "only this user's events" })),
        project_id: Schema.optional(Schema.String.annotate({ description: "only events of this project" })),
        model: Schema.optional(Schema.String.annotate({ description: "model, exact match" })),
        adapter: Schema.optional(Schema.String.annotate({ description: "adapter name" })),
        from: Schema.optional(instantParam("events at or after this instant")),
        to: Schema.optional(instantParam("events before this instant")),
        error_only: Schema.optional(BooleanParam.annotate({ description: "`true`: only events with a non-null error_code" })),
        type: Schema.optional(Schema.String.annotate({ description: "signal type, exact match (e.g. goal-drift)" })),
        action: Schema.optional(Schema.Literals(["block", "warn", "log", "notify"]).annotate({
          description: "only events a rule gave this action (the verdict's `action`)"
        })),
        ...ActivityPageQuery
      },
      success: pageOf(Event)
    })
      .annotate(RequiredScope, { resource: "events", access: "read" })
      .annotateMerge(OpenApi.annotations({ description: "Events (accepted signals), newest first." })),
    HttpApiEndpoint.get("get", "/events/:id", { params: Id, success: Event, error: NotFound })
      .annotate(RequiredScope, { resource: "events", access: "read" })
      .annotateMerge(OpenApi.annotations({
        description: "One event, by its id (evt_…) or by the id of its signal (sig_…, as POST /engine/v1/signals answered it)."
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Events", description: "One event per accepted signal; immutable." }))
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
        user_id: Schema.optional(Schema.String.annotate({ description: "only this user's events" })),
        project_id: Schema.optional(Schema.String.annotate({ description: "only events of this project" })),
        model: Schema.optional(Schema.String.annotate({ description: "model, exact match" })),
        adapter: Schema.optional(Schema.String.annotate({ description: "adapter name" })),
        ...ActivityPageQuery
      },
      success: UsageReportSchema,
      error: Unprocessable
    })
      .annotate(RequiredScope, { resource: "events", access: "read" })
      .annotateMerge(OpenApi.annotations({
        description: "Extension: tokens, cost, signals, sessions and errors in a time range, in total and per user, " +
          "model, project, adapter or day (in the org's time zone). Groups come by cost, highest first (days: newest " +
          "first), a page at a time; `totals` covers every group. Computed when asked from the events, so a range " +
          "that ends in the past gives the same answer every time."
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({
    title: "Usage",
    description: "Usage reports over the events: who and what spent how much."
  }))
{}
