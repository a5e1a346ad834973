import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { NotFound } from "../../domain/errors.ts"
import { IdPrefix } from "../../domain/ids.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import { Tenancy } from "../../store/tenancy-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"

export const FleetHandlers = HttpApiBuilder.group(
  ManagementApi,
  "fleet",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    return handlers
      .handle(
        "list",
        ({ query }) =>
          ApiPrincipal.use((p) => tenancy.listFleetCredentials(p.orgId, p.environment, { limit: query.limit ?? defaultPageSize, cursor: query.cursor }))
      )
      .handle(
        "create",
        ({ payload }) =>
          ApiPrincipal.use((p) =>
            tenancy.createFleetCredential(p.orgId, { environment: p.environment, name: payload.name }).pipe(
              Effect.map(({ key, record }) => ({ ...record, key })),
              Effect.catchTag("NotFound", Effect.die)
            )
          )
      )
      .handle("revoke", ({ params }) =>
        ApiPrincipal.use((p) =>
          params.id.startsWith(`${IdPrefix.fleetCredential}_`)
            ? tenancy.revokeFleetCredential(p.orgId, p.environment, params.id)
            : Effect.fail(NotFound.of(`fleet credential ${params.id} not found`))
        ))
      .handle(
        "unknownIdentities",
        () => ApiPrincipal.use((p) => Effect.map(tenancy.listUnknownIdentities(p.orgId, p.environment, 500), (data) => ({ data: [...data] })))
      )
  })
)
