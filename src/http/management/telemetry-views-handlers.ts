import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Unprocessable } from "../../domain/errors.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import { Coverage } from "../../store/coverage-repo.ts"
import { ToolMetrics } from "../../store/tool-metrics-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { instant } from "../query.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"
import { defaultStaleAfterDays } from "./telemetry-views-api.ts"
import { tenantOf } from "./tenant.ts"

/** A report's default range: the 30 days before now (as GET /usage). */
const defaultSpanMs = 30 * 24 * 3600 * 1000

export const TelemetryViewsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "telemetryViews",
  Effect.fn(function*(handlers) {
    const metrics = serviceOnTheWire(yield* ToolMetrics)
    const coverage = serviceOnTheWire(yield* Coverage)
    return handlers
      .handle("productivity", ({ query }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const to = instant(query.to) ?? new Date(now).toISOString()
            const from = instant(query.from) ?? new Date(Date.parse(to) - defaultSpanMs).toISOString()
            if (Date.parse(from) >= Date.parse(to)) return yield* Unprocessable.of("from must be before to", "validation_error")
            return yield* metrics.productivity(tenantOf(p), {
              group_by: query.group_by ?? "user",
              from,
              to,
              user_id: query.user_id,
              limit: query.limit ?? defaultPageSize,
              cursor: query.cursor
            })
          })
        ))
      .handle("coverage", ({ query }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            return yield* coverage.report(tenantOf(p), {
              now: new Date(now).toISOString(),
              staleAfterDays: query.stale_after_days ?? defaultStaleAfterDays,
              seenThrough: query.seen_through,
              stoppedOnly: query.stopped_reporting === undefined ? undefined : query.stopped_reporting === "true",
              limit: query.limit ?? defaultPageSize,
              cursor: query.cursor
            })
          })
        ))
  })
)
