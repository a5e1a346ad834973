import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SsoSettingsStore } from "../../store/sso-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"

export const SsoHandlers = HttpApiBuilder.group(
  ManagementApi,
  "sso",
  Effect.fn(function*(handlers) {
    const sso = serviceOnTheWire(yield* SsoSettingsStore)
    return handlers
      .handle("get", () => ApiPrincipal.use((p) => sso.get(p.orgId)))
      .handle("update", ({ payload }) => ApiPrincipal.use((p) => sso.put(p.orgId, payload)))
      .handle("remove", () => ApiPrincipal.use((p) => sso.remove(p.orgId)))
  })
)
