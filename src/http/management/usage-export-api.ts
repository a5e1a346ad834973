import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Unprocessable } from "../../domain/errors.ts"
import { matching } from "../../domain/text.ts"
import { exportDimensions, exportDimensionsShape, ExportFormat } from "../../domain/usage-export.ts"
import { instantParam } from "../query.ts"
import { managementGroup, requires } from "./endpoints.ts"

const optionalText = (description: string) => Schema.optional(Schema.String.annotate({ description }))

const GroupByParam = Schema.String.annotate({
  description: `comma-separated dimensions, any of ${exportDimensions.join(", ")} (default \`day,user,project,model\`). ` +
    "`team` counts each user in the teams they are in now: a user in two teams counts in both, one in none under an empty team."
}).pipe(Schema.check(matching(exportDimensionsShape, `expected dimensions from ${exportDimensions.join(", ")}, separated by commas`)))

export const exportContentTypes = { csv: "text/csv; charset=utf-8", jsonl: "application/x-ndjson" } as const

export class UsageExportGroup extends HttpApiGroup.make("usageExport")
  .add(
    HttpApiEndpoint.get("export", "/usage/export", {
      query: {
        format: Schema.optional(ExportFormat.annotate({ description: "`csv` (default) or `jsonl` (one JSON object a line)" })),
        group_by: Schema.optional(GroupByParam),
        from: Schema.optional(instantParam("events at or after this instant (default: 30 days before `to`)")),
        to: Schema.optional(instantParam("events before this instant (default: now)")),
        user_id: optionalText("only this user's events"),
        team_id: optionalText("only events of the users in this team now"),
        project_id: optionalText("only events of this project"),
        model: optionalText("model, exact match")
      },
      success: HttpApiSchema.StreamUint8Array({ contentType: [exportContentTypes.csv, exportContentTypes.jsonl] }),
      error: Unprocessable
    }).annotateMerge(requires(
      "events",
      "read",
      "Extension: usage in a time range as a file to take away: one row per day (in the org's time zone), user, " +
        "team, project and model (as `group_by` chooses), with signals, sessions, tokens_in, tokens_out, cost_usd and " +
        "error_count; users, teams and projects with their names. Rows come in the order of the dimensions (days " +
        "oldest first, ids bytewise, no project or model first). CSV has a header line (text cells that a spreadsheet " +
        "would take for a formula start with `'`); JSON lines have every column, null where a row has no value. The " +
        "file is streamed as PostgreSQL aggregates it (Content-Disposition: attachment), so any range can be asked " +
        "for; a client that goes away stops the query."
    ))
  )
  .pipe(managementGroup({
    title: "Usage export",
    description: "Usage as CSV or JSON lines, for spreadsheets and finance tools."
  }))
{}
