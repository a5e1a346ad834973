import type { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { Forbidden, Unauthorized } from "../../domain/errors.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { type Authenticator, authorizeEngine } from "../auth.ts"
import { bearerCredential } from "../bearer.ts"

/**
 * Whose telemetry an OTLP request is: the user of the license key an exporter sends as
 * `Authorization: Bearer <key>` (OTEL_EXPORTER_OTLP_HEADERS), on a plan with signals, exactly as
 * the engine API's ingest takes it. The one place an OTLP request gets its identity, so another
 * kind of credential (an org's fleet key naming the user by a resource attribute) can be added here.
 */
export const otlpPrincipal = (
  authenticator: Authenticator["Service"],
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<LicensePrincipal, Unauthorized | Forbidden> => authorizeEngine(authenticator, bearerCredential(request.headers.authorization), "signals")
