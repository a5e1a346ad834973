import { Effect } from "effect"
import { Forbidden, Unauthorized } from "../domain/errors.ts"
import { allowsLiveKeys } from "../domain/plans.ts"
import type { ApiKeyPrincipal } from "../domain/principal.ts"
import { sessionScopes } from "../domain/sso-access.ts"
import type { DashboardSessions, SessionCaller } from "../store/dashboard-sessions-repo.ts"
import { csrfAllows, csrfHeader } from "./session-cookie.ts"

/**
 * A signed-in person as a management principal: the org's live environment where its plan has
 * live keys (the test one otherwise), the scopes of the person's role, and the person, so that
 * audit entries name them. No key id: a person is not a key.
 */
export const sessionPrincipal = (caller: SessionCaller): ApiKeyPrincipal => ({
  keyId: "",
  orgId: caller.session.orgId,
  plan: caller.plan,
  environment: allowsLiveKeys(caller.plan) ? "live" : "test",
  scopes: sessionScopes({ role: caller.role, groups: [] }),
  rateLimits: caller.rateLimits,
  // Narrowed per endpoint by the role table when the request is served (auth.ts).
  person: { userId: caller.session.userId, role: caller.role, visibility: "org" }
})

/** What a request made with a session cookie carries besides the cookie, for the CSRF check. */
export interface SessionRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | undefined>>
}

/**
 * The origin a state-changing request must come from: PUBLIC_BASE_URL's where the operator set it
 * (behind a proxy the Host header may be an internal name), else the request's own host in the
 * scheme the browser named.
 */
const expectedOrigin = (request: SessionRequest, publicOrigin: string | undefined): string => {
  if (publicOrigin !== undefined) return publicOrigin
  const origin = request.headers.origin
  const scheme = origin?.startsWith("https:") ? "https:" : "http:"
  return `${scheme}//${request.headers.host ?? ""}`
}

/**
 * The principal of a request made with the dashboard session's cookie: 401 `session_expired`
 * for a session that is unknown, ended, expired or whose person was deactivated; 403
 * `csrf_token_invalid` for a state-changing request without the session's CSRF token (or from
 * another origin). Reads need no token.
 */
export const authenticateSession = (
  sessions: DashboardSessions["Service"],
  sessionId: string,
  request: SessionRequest,
  publicOrigin: string | undefined
): Effect.Effect<ApiKeyPrincipal, Unauthorized | Forbidden> =>
  Effect.flatMap(sessions.caller(sessionId), (caller): Effect.Effect<ApiKeyPrincipal, Unauthorized | Forbidden> => {
    if (caller === undefined) {
      return Effect.fail(Unauthorized.of("the dashboard session has ended or expired; sign in again", "session_expired"))
    }
    const allowed = csrfAllows({
      method: request.method,
      origin: request.headers.origin,
      token: request.headers[csrfHeader],
      expectedOrigin: expectedOrigin(request, publicOrigin),
      sessionToken: caller.session.csrfToken
    })
    return allowed
      ? Effect.succeed(sessionPrincipal(caller))
      : Effect.fail(Forbidden.of(
        `a change made with the dashboard session needs the session's CSRF token in ${csrfHeader}, from the dashboard's own origin`,
        "csrf_token_invalid"
      ))
  })
