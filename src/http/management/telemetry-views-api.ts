import { Schema, SchemaTransformation } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Unprocessable } from "../../domain/errors.ts"
import { matching } from "../../domain/text.ts"
import { CoverageSource, CoverageTotals, CoverageUser, ProductivityFigures, ProductivityGroup, ProductivityGroupBy } from "../../domain/telemetry-views.ts"
import { ActivityPageQuery, pageOf } from "../contract.ts"
import { BooleanParam, instantParam } from "../query.ts"
import { managementGroup, requires } from "./endpoints.ts"

/** Days of silence after which a seen user counts as "stopped reporting" when the query names none. */
export const defaultStaleAfterDays = 7

const StaleAfterDays = Schema.String.pipe(
  Schema.check(matching(/^[1-9][0-9]{0,2}$/, "expected a number of days, 1 to 999")),
  Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)
).annotate({ description: `days without a signal after which a seen user has stopped reporting, 1 to 999 (default ${defaultStaleAfterDays})` })

export const ProductivityReportSchema = Schema.Struct({
  group_by: ProductivityGroupBy,
  from: Schema.String.annotate({ description: "the range's start (inclusive), ISO 8601" }),
  to: Schema.String.annotate({ description: "the range's end (exclusive), ISO 8601" }),
  totals: ProductivityFigures.annotate({ description: "the whole range, every user (all pages; a user in no team too)" }),
  ...pageOf(ProductivityGroup).fields
})

export const CoverageReportSchema = Schema.Struct({
  as_of: Schema.String.annotate({ description: "the instant the report was made, ISO 8601" }),
  stale_after_days: Schema.Number,
  totals: CoverageTotals.annotate({ description: "every user of the org (all pages, before the filters)" }),
  ...pageOf(CoverageUser).fields
})

export class TelemetryViewsGroup extends HttpApiGroup.make("telemetryViews")
  .add(
    HttpApiEndpoint.get("productivity", "/productivity", {
      query: {
        group_by: Schema.optional(ProductivityGroupBy.annotate({ description: "`user` (default) or `team`" })),
        from: Schema.optional(instantParam("counters and events at or after this instant (default: 30 days before `to`)")),
        to: Schema.optional(instantParam("counters and events before this instant (default: now)")),
        user_id: Schema.optional(Schema.String.annotate({ description: "only this user's figures" })),
        ...ActivityPageQuery
      },
      success: ProductivityReportSchema,
      error: Unprocessable
    }).annotateMerge(requires(
      "events",
      "read",
      "Extension: the coding tools' own productivity counters (lines added and removed, commits, pull requests, " +
        "accepted and rejected edits, as exported over OTLP) beside spend, per user or per team, in a time range. " +
        "Groups by id, a page at a time; a resent or cumulative export counts once."
    )),
    HttpApiEndpoint.get("coverage", "/coverage", {
      query: {
        stale_after_days: Schema.optional(StaleAfterDays),
        seen_through: Schema.optional(CoverageSource.annotate({ description: "only users seen this way" })),
        stopped_reporting: Schema.optional(BooleanParam.annotate({ description: "`true`: only users who stopped reporting" })),
        ...ActivityPageQuery
      },
      success: CoverageReportSchema
    }).annotateMerge(requires(
      "events",
      "read",
      "Extension: each user of the org, when last seen through hook adapters and through the tools' own telemetry, " +
        "`seen_through` hooks, telemetry, both or none, and whether the user's tools stopped reporting. Users by id."
    ))
  )
  .pipe(managementGroup({
    title: "Telemetry views",
    description: "What the coding tools' own telemetry adds: productivity figures and coverage."
  }))
{}
