import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { type AuditOrigin, auditTargetOf } from "../domain/audit.ts"
import { RequestId } from "../observability/request-id.ts"
import { AuditLog } from "../store/audit-repo.ts"
import { ApiPrincipal } from "./contract.ts"

/**
 * Writes an audit entry for every management write that succeeds, in the same transaction as the
 * write: the handler runs inside the transaction (its repositories' own transactions nest as
 * savepoints), and the entry is inserted before the commit. A write that fails rolls back and
 * leaves no entry; an entry that cannot be written fails the write. Reads pass through.
 */
export class AuditTrail extends HttpApiMiddleware.Service<AuditTrail, {
  requires: ApiPrincipal
}>()("signal-engine/http/AuditTrail") {}

/** The id of what a creation made, from its JSON answer. */
const createdId = (response: HttpServerResponse.HttpServerResponse): string | null => {
  const body = response.body
  if (body._tag !== "Uint8Array") return null
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(body.body))
    return typeof parsed === "object" && parsed !== null && "id" in parsed && typeof parsed.id === "string" ? parsed.id : null
  } catch {
    return null
  }
}

/**
 * Where the request being served comes from (the client's address, or the proxy's behind one).
 * Also for entries recorded by handlers themselves, such as sign-ins: `AuditLog.record` with it.
 */
export const requestOrigin: Effect.Effect<AuditOrigin, never, HttpServerRequest.HttpServerRequest> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  return {
    ip: Option.getOrNull(request.remoteAddress),
    user_agent: request.headers["user-agent"] ?? null,
    request_id: (yield* RequestId) || null
  }
})

export const AuditTrailLive = Layer.effect(
  AuditTrail,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    return AuditTrail.of((httpEffect, { endpoint }) => {
      const target = endpoint.method === "GET" ? undefined : auditTargetOf(endpoint.path, endpoint.identifier)
      if (target === undefined) return httpEffect
      const audited = Effect.gen(function*() {
        const principal = yield* ApiPrincipal
        const route = yield* HttpRouter.RouteContext
        // The org and its SSO settings are one per org: their id is the org's.
        const pathId = target.resource === "org" || target.resource === "sso" ? principal.orgId : target.idInPath ? route.params.id ?? null : null
        const before = pathId === null ? null : yield* audit.snapshot(principal.orgId, target.resource, pathId)
        const response = yield* httpEffect
        const id = pathId ?? createdId(response)
        const after = id === null ? null : yield* audit.snapshot(principal.orgId, target.resource, id)
        yield* audit.record({
          orgId: principal.orgId,
          environment: principal.environment,
          actor: principal.person === undefined ? { type: "api_key", id: principal.keyId } : { type: "user", id: principal.person.userId },
          action: target.action,
          resource: { type: target.resource, id },
          before,
          after,
          origin: yield* requestOrigin
        })
        return response
      })
      return sql.withTransaction(audited).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  })
)
