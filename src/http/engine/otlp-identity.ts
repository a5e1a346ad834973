import type { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { Forbidden, Unauthorized } from "../../domain/errors.ts"
import { type FleetPrincipal, isFleetCredential } from "../../domain/fleet.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { type Authenticator, authorizeEngine } from "../auth.ts"
import { bearerCredential } from "../bearer.ts"
import { authorizeFleet } from "./fleet-identity.ts"

/**
 * Whose telemetry an OTLP request is, from `Authorization: Bearer <credential>`
 * (OTEL_EXPORTER_OTLP_HEADERS), on a plan with signals: a user's license key, exactly as the
 * engine API's ingest takes it, or the org's fleet credential (`flt_…`), each record then naming
 * its user by `user.email` (src/http/engine/fleet-identity.ts). The one place an OTLP request
 * gets its identity.
 */
export const otlpPrincipal = (
  authenticator: Authenticator["Service"],
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<LicensePrincipal | FleetPrincipal, Unauthorized | Forbidden> => {
  const credential = bearerCredential(request.headers.authorization)
  return isFleetCredential(credential) ? authorizeFleet(authenticator, credential) : authorizeEngine(authenticator, credential, "signals")
}

export const isFleet = (principal: LicensePrincipal | FleetPrincipal): principal is FleetPrincipal => !("userId" in principal)
