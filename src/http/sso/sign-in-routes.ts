import { Effect, Result } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { isStorableText } from "../../domain/text.ts"
import { RequestId } from "../../observability/request-id.ts"
import { type SignInSettings, SsoSignIn } from "../../store/sso-sign-in-repo.ts"
import { requestOrigin } from "../audit-trail.ts"
import type { DirectRoute } from "../gateway.ts"
import { cookieValue, sessionCookieName, sessionIdOf } from "../session-cookie.ts"
import { DashboardSessions } from "../../store/dashboard-sessions-repo.ts"
import { authorizationRequest, signInClaims } from "./oidc.ts"
import { failureText, recordFailure, signIn } from "./sign-in.ts"
import { makeSsoContext } from "./sso-context.ts"
import { failurePage } from "./sso-page.ts"

/**
 * The two legs of signing in with the org's identity provider (authorization code + PKCE):
 * `/dashboard/sso/login?org=` sends the browser to the provider, `/dashboard/sso/callback` takes
 * its answer, makes the dashboard session and sends the browser to the dashboard. Failures are a
 * plain page saying what went wrong.
 */
export const ssoLoginRoute = { method: "GET", path: "/dashboard/sso/login" } as const
export const ssoCallbackRoute = { method: "GET", path: "/dashboard/sso/callback" } as const

/**
 * The state of the sign-in under way, in a cookie of its own: the answer must come back to the
 * browser that started it (a link with someone else's code and state does nothing).
 */
const stateCookie = "se_sso_state"
const attemptSeconds = 600

/** Picks the org a person named: by id, or by a name only one org with SSO has. */
const orgOf = (found: ReadonlyArray<SignInSettings>, ref: string): SignInSettings | "ambiguous" | undefined =>
  found.length === 0 ? undefined : found[0]!.orgId === ref || found.length === 1 ? found[0] : "ambiguous"

export const makeSignInRoutes = Effect.gen(function*() {
  const store = yield* SsoSignIn
  const sessions = yield* DashboardSessions
  const context = yield* makeSsoContext
  // The services the sign-in uses, so that the handlers need only the request.
  const services = yield* Effect.context<Effect.Services<ReturnType<typeof signIn>>>()
  const cookieOptions = (path: string, maxAgeSeconds: number) => ({
    path,
    httpOnly: true,
    sameSite: "lax" as const,
    secure: context.secureCookies,
    maxAge: `${maxAgeSeconds} seconds` as const
  })

  const login = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const decision = yield* context.throttle(request)
    if (!decision.allowed) {
      return HttpServerResponse.setHeader(
        failurePage(429, `Too many sign-ins from this address: try again in ${decision.retryAfter} s.`),
        "retry-after",
        String(decision.retryAfter)
      )
    }
    const ref = (new URL(request.url, "http://service").searchParams.get("org") ?? "").trim()
    if (ref === "" || !isStorableText(ref) || ref.length > 200) {
      return failurePage(400, "Enter your organization's name or id to sign in with single sign-on.")
    }
    const settings = orgOf(yield* store.settingsFor(ref), ref)
    if (settings === undefined) return failurePage(404, `No organization named “${ref}” signs in with single sign-on.`)
    if (settings === "ambiguous") return failurePage(409, "Several organizations have that name: sign in with your organization's id.")
    return yield* authorizationRequest(settings, context.redirectUri(request)).pipe(
      Effect.tap((auth) => store.begin(auth.state, { orgId: settings.orgId, codeVerifier: auth.codeVerifier, nonce: auth.nonce }, attemptSeconds)),
      Effect.map((auth) =>
        HttpServerResponse.redirect(auth.url, { status: 302, headers: { "cache-control": "no-store" } }).pipe(
          HttpServerResponse.setCookieUnsafe(stateCookie, auth.state, cookieOptions("/dashboard/sso", attemptSeconds))
        )
      ),
      Effect.catchTag("OidcFailure", (failure) => Effect.succeed(failurePage(502, failureText.provider_unreachable, failure.message)))
    )
  })

  const callback = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = yield* RequestId
    const query = new URL(request.url, "http://service").search
    const state = new URLSearchParams(query).get("state") ?? ""
    const clearState = HttpServerResponse.expireCookieUnsafe(stateCookie, { path: "/dashboard/sso" })
    const page = (status: number, message: string, detail?: string) => clearState(failurePage(status, message, detail, requestId))
    if (state === "" || cookieValue(request.headers.cookie, stateCookie) !== state) {
      return page(400, "This sign-in was not started in this browser, or it is over already. Start again from the sign-in page.")
    }
    const attempt = yield* store.take(state)
    if (attempt === undefined) return page(400, "This sign-in has expired or was used already. Start again from the sign-in page.")
    const settings = (yield* store.settingsFor(attempt.orgId))[0]
    if (settings === undefined || settings.orgId !== attempt.orgId) return page(404, "Single sign-on is no longer set up for this organization.")
    const origin = yield* requestOrigin
    const exchanged = yield* Effect.result(signInClaims(settings, new URL(`${context.redirectUri(request)}${query}`), { state, ...attempt }))
    if (Result.isFailure(exchanged)) {
      const failure = exchanged.failure
      yield* recordFailure(settings, { reason: failure.reason, detail: failure.message }, origin)
      return page(failure.reason === "provider_unreachable" ? 502 : 403, failureText[failure.reason], failure.message)
    }
    const claims = exchanged.success
    const outcome = yield* signIn(settings, claims, context.sessionTtlSeconds, origin)
    if ("refused" in outcome) return page(403, failureText[outcome.refused])
    // A session this browser held before (someone else's, say) ends with the new one's start.
    const previous = sessionIdOf(request.headers.cookie)
    if (previous !== undefined) yield* sessions.end(previous)
    return HttpServerResponse.redirect("/", { status: 303, headers: { "cache-control": "no-store" } }).pipe(
      clearState,
      HttpServerResponse.setCookieUnsafe(sessionCookieName, outcome.sessionId, cookieOptions("/", context.sessionTtlSeconds))
    )
  }).pipe(Effect.provideContext(services))

  return [{ ...ssoLoginRoute, handler: login, raw: true }, { ...ssoCallbackRoute, handler: callback, raw: true }] satisfies ReadonlyArray<DirectRoute>
})
