import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { defaultPageSize } from "../../domain/pagination.ts"
import type { ApiKeyPrincipal } from "../../domain/principal.ts"
import { ReportSchedules } from "../../store/report-schedules-repo.ts"
import type { Tenant } from "../../store/tenant-pages.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"

const tenant = (p: ApiKeyPrincipal): Tenant => ({ orgId: p.orgId, environment: p.environment })

export const ReportSchedulesHandlers = HttpApiBuilder.group(
  ManagementApi,
  "reportSchedules",
  Effect.fn(function*(handlers) {
    const schedules = serviceOnTheWire(yield* ReportSchedules)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => schedules.list(tenant(p), { limit: query.limit ?? defaultPageSize, cursor: query.cursor })))
      .handle("create", ({ payload }) => ApiPrincipal.use((p) => schedules.create(tenant(p), payload)))
      .handle("get", ({ params }) => ApiPrincipal.use((p) => schedules.get(tenant(p), params.id)))
      .handle("update", ({ params, payload }) => ApiPrincipal.use((p) => schedules.update(tenant(p), params.id, payload)))
      .handle("delete", ({ params }) => ApiPrincipal.use((p) => schedules.remove(tenant(p), params.id)))
  })
)
