import { stringify } from "csv-stringify/sync"
import { Effect, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { Unprocessable } from "../../domain/errors.ts"
import {
  csvRecord,
  type ExportFormat,
  type ExportRow,
  exportColumns,
  exportFileName,
  jsonRecord,
  parseExportDimensions
} from "../../domain/usage-export.ts"
import { UsageExports } from "../../store/usage-export-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { instant } from "../query.ts"
import { ManagementApi } from "./api.ts"
import { tenantOf } from "./tenant.ts"
import { exportContentTypes } from "./usage-export-api.ts"

/** An export's default range, as the usage report's: the 30 days before now. */
const defaultSpanMs = 30 * 24 * 3600 * 1000

/**
 * The rows as the file's text, a chunk of rows (as PostgreSQL delivered them) at a time: CSV
 * quoted by csv-stringify (RFC 4180: commas, quotes and line breaks in names), header first even
 * when there are no rows; or one JSON object a line.
 */
const encodeRows = (rows: Stream.Stream<ExportRow>, columns: ReturnType<typeof exportColumns>, format: ExportFormat) =>
  format === "csv"
    ? rows.pipe(
      Stream.chunks,
      Stream.map((chunk) => stringify(chunk.map((r) => csvRecord(r, columns)))),
      Stream.prepend([stringify([columns])])
    )
    : rows.pipe(
      Stream.chunks,
      Stream.map((chunk) => chunk.map((r) => `${JSON.stringify(jsonRecord(r, columns))}\n`).join(""))
    )

export const UsageExportHandlers = HttpApiBuilder.group(
  ManagementApi,
  "usageExport",
  Effect.fn(function*(handlers) {
    const exports = yield* UsageExports
    return handlers.handle("export", ({ query }) =>
      ApiPrincipal.use((p) =>
        Effect.gen(function*() {
          const to = instant(query.to) ?? new Date().toISOString()
          const from = instant(query.from) ?? new Date(Date.parse(to) - defaultSpanMs).toISOString()
          if (Date.parse(from) >= Date.parse(to)) return yield* Unprocessable.of("from must be before to", "validation_error")
          const dimensions = parseExportDimensions(query.group_by)
          const format = query.format ?? "csv"
          const opened = yield* exports.open(tenantOf(p), {
            dimensions,
            from,
            to,
            user_id: query.user_id,
            team_id: query.team_id,
            project_id: query.project_id,
            model: query.model
          })
          const body = encodeRows(opened.rows, exportColumns(dimensions), format).pipe(Stream.encodeText)
          return HttpServerResponse.stream(body, {
            contentType: exportContentTypes[format],
            headers: {
              "content-disposition": `attachment; filename="${exportFileName(from, to, format)}"`,
              "x-time-zone": opened.timeZone,
              "cache-control": "no-store"
            }
          })
        })
      ))
  })
)
