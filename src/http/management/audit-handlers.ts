import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { defaultPageSize } from "../../domain/pagination.ts"
import { AuditLog } from "../../store/audit-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { instant } from "../query.ts"
import { ManagementApi } from "./api.ts"

export const AuditLogHandlers = HttpApiBuilder.group(
  ManagementApi,
  "auditLog",
  Effect.fn(function*(handlers) {
    const audit = yield* AuditLog
    return handlers.handle("list", ({ query }) =>
      ApiPrincipal.use((p) => {
        // A test key (handed to CI, to staging) sees only what was done in the test environment.
        const visible = p.environment === "live" ? (["live", "test"] as const) : (["test"] as const)
        const environments = query.environment === undefined ? visible : visible.filter((e) => e === query.environment)
        return audit.list(p.orgId, {
          environments,
          action: query.action,
          resource_type: query.resource_type,
          resource_id: query.resource_id,
          actor_id: query.actor_id,
          since: instant(query.from),
          until: instant(query.to)
        }, { limit: query.limit ?? defaultPageSize, cursor: query.cursor })
      }))
  })
)
