import { Context, Schema, SchemaTransformation } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import {
  BadRequest,
  Forbidden,
  InternalError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized
} from "../domain/errors.ts"
import { decodeCursor, defaultPageSize, maxPageSize } from "../domain/pagination.ts"
import { matching } from "../domain/text.ts"
import type { EngineFeature } from "../domain/plans.ts"
import type { ApiKeyPrincipal, LicensePrincipal } from "../domain/principal.ts"
import type { Access, Resource } from "../domain/scopes.ts"
import { sessionCookieName } from "./session-cookie.ts"

/** The scope an endpoint needs (annotation read by the management auth middleware). */
export class RequiredScope extends Context.Service<RequiredScope, {
  readonly resource: Resource
  readonly access: Access
}>()("signal-engine/http/RequiredScope") {}

/**
 * Marks the endpoints that list and revoke keys: a live key of an org whose plan no longer has
 * live keys may still call them, so that a leaked live key can be found and revoked after a
 * downgrade (everything else answers such a key 403 plan_upgrade_required).
 */
export class KeyHousekeeping extends Context.Service<KeyHousekeeping, true>()("signal-engine/http/KeyHousekeeping") {}

/** The plan feature an engine endpoint belongs to (annotation read by the engine auth middleware). */
export class RequiredFeature extends Context.Service<RequiredFeature, EngineFeature>()(
  "signal-engine/http/RequiredFeature"
) {}

/** The authenticated API key of a management request. */
export class ApiPrincipal extends Context.Service<ApiPrincipal, ApiKeyPrincipal>()("signal-engine/http/ApiPrincipal") {}

/** The authenticated user of an engine request. */
export class EnginePrincipal extends Context.Service<EnginePrincipal, LicensePrincipal>()(
  "signal-engine/http/EnginePrincipal"
) {}

/**
 * Errors any endpoint of either surface may answer with, whatever it does (503
 * `database_unavailable`: PostgreSQL out of reach, see database-outage.ts).
 */
const commonErrors = [BadRequest, PayloadTooLarge, TooManyRequests, InternalError, ServiceUnavailable] as const

/**
 * Maps request decoding failures to 400 and stamps the request id on every error envelope.
 * It is the outermost API middleware of every group.
 */
export class Envelope extends HttpApiMiddleware.Service<Envelope>()("signal-engine/http/Envelope", {
  error: [...commonErrors, NotFound, MethodNotAllowed]
}) {}

export class ManagementAuth extends HttpApiMiddleware.Service<ManagementAuth, {
  provides: ApiPrincipal
}>()("signal-engine/http/ManagementAuth", {
  // A signed-in person's dashboard session (src/http/session-auth.ts) is the alternative to a key.
  security: {
    apiKey: HttpApiSecurity.bearer,
    session: HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName }).pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A signed-in person's dashboard session (single sign-on): the role's scopes; changes also need the session's CSRF token " +
          "in X-CSRF-Token (403 csrf_token_invalid), an expired or ended session is 401 session_expired, a role without the " +
          "scope 403 insufficient_role. A request with a key is the key's."
      )
    )
  },
  error: [Unauthorized, Forbidden]
}) {}

export class EngineAuth extends HttpApiMiddleware.Service<EngineAuth, {
  provides: EnginePrincipal
}>()("signal-engine/http/EngineAuth", {
  security: { licenseKey: HttpApiSecurity.bearer },
  error: [Unauthorized, Forbidden, TooManyRequests]
}) {}

/** Decimal digits only: `1e2` or `0x10` are numbers to JavaScript, not page sizes to a client. */
const PageLimit = Schema.optional(
  Schema.String.pipe(
    Schema.check(matching(/^(100|[1-9][0-9]?)$/, `expected a page size, 1 to ${maxPageSize}`)),
    Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString),
    Schema.check(Schema.isBetween({ minimum: 1, maximum: maxPageSize }))
  ).annotate({ description: `page size, 1 to ${maxPageSize} (default ${defaultPageSize})` })
)

/**
 * Query parameters of the lists paged by id (users, keys, rules, webhooks, alerts…). A cursor
 * this service did not make is a 400, as on the activity lists; the empty string (the last
 * page's cursor) starts from the beginning.
 */
export const PageQuery = {
  limit: PageLimit,
  cursor: Schema.optional(
    Schema.String.annotate({ description: "cursor from the previous page" }).pipe(
      Schema.check(Schema.makeFilter((s: string) => s === "" || decodeCursor(s) !== undefined || "not a cursor of this list"))
    )
  )
}

/** The same for the activity lists (sessions, events), whose cursors the activity store reads and checks. */
export const ActivityPageQuery = {
  limit: PageLimit,
  cursor: Schema.optional(Schema.String.annotate({ description: "cursor from the previous page" }))
}

export const pageOf = <S extends Schema.Top>(item: S) =>
  Schema.Struct({
    data: Schema.Array(item),
    cursor: Schema.String.annotate({ description: "pass as `cursor` for the next page; empty when there is none" }),
    has_more: Schema.Boolean
  })
