import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { toEngineSession } from "../../domain/activity.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { Activity, type Tenant } from "../../store/activity-repo.ts"
import { EnginePrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { instant } from "../query.ts"
import { EngineApi } from "./api.ts"

const tenant = (p: LicensePrincipal): Tenant => ({ orgId: p.orgId, environment: p.environment })

export const EngineSessionsHandlers = HttpApiBuilder.group(
  EngineApi,
  "sessions",
  Effect.fn(function*(handlers) {
    const activity = serviceOnTheWire(yield* Activity)
    return handlers
      .handle("list", ({ query }) =>
        EnginePrincipal.use((p) =>
          activity.listUserSessions(tenant(p), p.userId, {
            limit: query.limit ?? defaultPageSize,
            before: instant(query.before),
            adapter: query.adapter
          }).pipe(Effect.map((sessions) => ({ sessions: sessions.map(toEngineSession) })))
        ))
      .handle("get", ({ params }) =>
        EnginePrincipal.use((p) =>
          Effect.gen(function*() {
            const session = yield* activity.getSession(tenant(p), params.id, p.userId)
            const signals = yield* activity.sessionSignals(tenant(p), session.id)
            return { session: toEngineSession(session), signals }
          })
        ))
  })
)
