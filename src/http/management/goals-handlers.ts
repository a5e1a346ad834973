import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { defaultPageSize } from "../../domain/pagination.ts"
import { Goals } from "../../store/goals-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { ManagementApi } from "./api.ts"
import { tenantOf } from "./tenant.ts"

export const GoalsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "goals",
  Effect.fn(function*(handlers) {
    const goals = yield* Goals
    return handlers.handle("list", ({ query }) =>
      ApiPrincipal.use((p) =>
        goals.list(
          tenantOf(p),
          { user_id: query.user_id, status: query.status },
          { limit: query.limit ?? defaultPageSize, cursor: query.cursor }
        )
      ))
  })
)
