import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql"
import { envelopeOf, type Forbidden, TooManyRequests, type Unauthorized } from "../../domain/errors.ts"
import { operationsFor } from "../../domain/roles.ts"
import { isStorableText } from "../../domain/text.ts"
import { RequestId } from "../../observability/request-id.ts"
import { AuditLog } from "../../store/audit-repo.ts"
import { DashboardSessions } from "../../store/dashboard-sessions-repo.ts"
import { SsoSignIn } from "../../store/sso-sign-in-repo.ts"
import { requestOrigin } from "../audit-trail.ts"
import type { DirectRoute } from "../gateway.ts"
import { authenticateSession } from "../session-auth.ts"
import { sessionCookieName, sessionIdOf } from "../session-cookie.ts"
import { makeSsoContext } from "./sso-context.ts"

/**
 * The dashboard's side of a signed-in session: who is signed in and the CSRF token to send
 * (`/dashboard/sso/me`), sign-out, and what the sign-in page may ask about an org before anyone
 * is signed in (`/dashboard/sso/org`).
 */
export const ssoMeRoute = { method: "GET", path: "/dashboard/sso/me" } as const
export const ssoLogoutRoute = { method: "POST", path: "/dashboard/sso/logout" } as const
export const ssoOrgRoute = { method: "GET", path: "/dashboard/sso/org" } as const

const noStore = { "cache-control": "no-store" }

export const makeSessionRoutes = Effect.gen(function*() {
  const sessions = yield* DashboardSessions
  const store = yield* SsoSignIn
  const audit = yield* AuditLog
  const sql = yield* SqlClient.SqlClient
  const context = yield* makeSsoContext
  const cleared = HttpServerResponse.expireCookieUnsafe(sessionCookieName, { path: "/" })

  const refused = (error: Unauthorized | Forbidden) =>
    Effect.map(RequestId, (requestId: string) => {
      const response = HttpServerResponse.jsonUnsafe(envelopeOf(error, requestId), { status: error.status, headers: noStore })
      return error.status === 401 ? cleared(response) : response
    })

  /** The request's session as a principal (401 session_expired, 403 csrf_token_invalid), and its id. */
  const signedIn = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const id = sessionIdOf(request.headers.cookie) ?? ""
    const principal = yield* authenticateSession(sessions, id, request, context.publicOrigin)
    return { id, principal }
  })

  const me = Effect.gen(function*() {
    const { id, principal } = yield* signedIn
    const caller = (yield* sessions.caller(id))!
    const [person] = yield* sql<{ readonly email: string; readonly name: string; readonly org_name: string }>`
      SELECT u.email, u.name, o.name AS org_name FROM users u JOIN orgs o ON o.id = u.org_id WHERE u.id = ${caller.session.userId}`
    return HttpServerResponse.jsonUnsafe({
      user: { id: caller.session.userId, email: person?.email ?? "", name: person?.name ?? "", role: caller.role },
      org: { id: caller.session.orgId, name: person?.org_name ?? "" },
      environment: principal.environment,
      operations: operationsFor(caller.role),
      csrf_token: caller.session.csrfToken,
      expires_at: caller.session.expiresAt.toISOString()
    }, { headers: noStore })
  }).pipe(Effect.catchTags({ Unauthorized: refused, Forbidden: refused }))

  const logout = Effect.gen(function*() {
    const { id, principal } = yield* signedIn
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sessions.end(id)
      yield* audit.record({
        orgId: principal.orgId,
        environment: principal.environment,
        actor: { type: "user", id: principal.person!.userId },
        action: "user.sign_out",
        resource: { type: "user", id: principal.person!.userId },
        before: null,
        after: null,
        origin: yield* requestOrigin
      })
    })).pipe(Effect.orDie)
    return cleared(HttpServerResponse.empty({ status: 204, headers: noStore }))
  }).pipe(Effect.catchTags({ Unauthorized: refused, Forbidden: refused }))

  /**
   * Whether an org signs in with SSO and still takes a pasted key: all the sign-in page needs. A
   * name or id of no org with SSO answers what an org without it would, so the answer does not
   * tell which orgs exist.
   */
  const org = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const decision = yield* context.throttle(request)
    if (!decision.allowed) {
      const requestId = yield* RequestId
      const error = TooManyRequests.of(`rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`)
      return HttpServerResponse.jsonUnsafe(envelopeOf(error, requestId), {
        status: 429,
        headers: { ...noStore, "retry-after": String(decision.retryAfter) }
      })
    }
    const ref = (new URL(request.url, "http://service").searchParams.get("org") ?? "").trim()
    const found = ref === "" || ref.length > 200 || !isStorableText(ref) ? [] : yield* store.settingsFor(ref)
    return HttpServerResponse.jsonUnsafe({
      sso: found.length > 0,
      api_key_sign_in: found.length === 0 || found.some((s) => s.allowApiKeySignIn)
    }, { headers: noStore })
  })

  return [
    { ...ssoMeRoute, handler: me },
    { ...ssoLogoutRoute, handler: logout },
    { ...ssoOrgRoute, handler: org }
  ] satisfies ReadonlyArray<DirectRoute>
})
