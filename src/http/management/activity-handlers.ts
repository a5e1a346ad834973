import { Effect } from "effect"
import { Unprocessable } from "../../domain/errors.ts"
import { HttpApiBuilder } from "effect/http-api"
import { defaultPageSize } from "../../domain/pagination.ts"
import { Activity, type SessionFilters } from "../../store/activity-repo.ts"
import { tenantOf } from "./tenant.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { instant } from "../query.ts"
import { ManagementApi } from "./api.ts"
import { eventIdFor } from "../../domain/projection-rows.ts"

const tenant = tenantOf

const page = (query: {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  readonly order?: "asc" | "desc" | undefined
}) => ({ limit: query.limit ?? defaultPageSize, cursor: query.cursor, order: query.order })

/** The filters both activity lists have, as the query gives them, with their instants normalized. */
const commonFilters = (query: SessionFilters): SessionFilters => ({
  user_id: query.user_id,
  project_id: query.project_id,
  model: query.model,
  adapter: query.adapter,
  from: instant(query.from),
  to: instant(query.to)
})

export const SessionsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "sessions",
  Effect.fn(function*(handlers) {
    const activity = serviceOnTheWire(yield* Activity)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => activity.listSessions(tenant(p), commonFilters(query), page(query))))
      .handle("get", ({ params }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            const session = yield* activity.getSession(tenant(p), params.id)
            const signals = yield* activity.sessionSignals(tenant(p), session.id)
            return { ...session, signals }
          })
        ))
      .handle("events", ({ params, query }) => ApiPrincipal.use((p) => activity.listSessionEvents(tenant(p), params.id, page(query))))
  })
)

export const EventsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "events",
  Effect.fn(function*(handlers) {
    const activity = serviceOnTheWire(yield* Activity)
    return handlers
      .handle("list", ({ query }) =>
        ApiPrincipal.use((p) =>
          activity.listEvents(tenant(p), {
            session_id: query.session_id,
            ...commonFilters(query),
            error_only: query.error_only === "true",
            action: query.action,
            type: query.type,
            finding: query.finding,
            has_findings: query.has_findings === "true"
          }, page(query))
        ))
      // By its id, or by the id of its signal (what the adapter was answered): one event per signal.
      .handle("get", ({ params }) => ApiPrincipal.use((p) => activity.getEvent(tenant(p), params.id.startsWith("sig_") ? eventIdFor(params.id) : params.id)))
  })
)

/** A report's default range: the 30 days before now. */
const defaultSpanMs = 30 * 24 * 3600 * 1000

export const UsageHandlers = HttpApiBuilder.group(
  ManagementApi,
  "usage",
  Effect.fn(function*(handlers) {
    const activity = serviceOnTheWire(yield* Activity)
    return handlers
      .handle("report", ({ query }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            const to = instant(query.to) ?? new Date().toISOString()
            const from = instant(query.from) ?? new Date(Date.parse(to) - defaultSpanMs).toISOString()
            if (Date.parse(from) >= Date.parse(to)) {
              // Each is a valid instant; together they name no span (a rule the document cannot state).
              return yield* Unprocessable.of("from must be before to", "validation_error")
            }
            return yield* activity.usage(tenant(p), {
              group_by: query.group_by ?? "user",
              from,
              to,
              user_id: query.user_id,
              project_id: query.project_id,
              model: query.model,
              adapter: query.adapter,
              limit: query.limit ?? defaultPageSize,
              cursor: query.cursor
            })
          })
        ))
  })
)
