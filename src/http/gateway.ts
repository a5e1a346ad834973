import { isUtf8 } from "node:buffer"
import { Cause, Config, Effect, Option } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import {
  BadRequest,
  envelopeOf,
  InternalError,
  isApiError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  TooManyRequests,
  UnsupportedMediaType,
  type ApiError,
  type ErrorEnvelope
} from "../domain/errors.ts"
import { makeRequestId } from "../domain/ids.ts"
import { isStorableText, jsonProblem, unstorableTextMessage } from "../domain/text.ts"
import { anonymousRateWindows, managementRateWindows, type Plan, type RateLimitOverrides } from "../domain/plans.ts"
import { RateLimiter, type RateDecision } from "../store/rate-limits.ts"
import { type Authentication, Authenticator } from "./auth.ts"
import { sessionPrincipal } from "./session-auth.ts"
import { sessionIdOf } from "./session-cookie.ts"
import { DashboardSessions } from "../store/dashboard-sessions-repo.ts"
import { bearerCredential } from "./bearer.ts"
import { DatabaseHealth, isDatabaseUnavailable } from "../store/database-health.ts"
import { databaseUnavailable, makeOutageLog, retryAfterSeconds } from "./database-outage.ts"
import { Draining } from "./draining.ts"
import { childrenByKey, Metrics, secondsSince } from "../observability/metrics.ts"
import { RequestFacts } from "../observability/request-facts.ts"
import { RequestId } from "../observability/request-id.ts"
import { receivedAt, RequestReceived } from "../observability/request-received.ts"
import { ResponseHeaders } from "./response-headers.ts"
import type { RouteTable } from "./route-table.ts"

const envelopeResponse = (body: ErrorEnvelope, headers?: Record<string, string>) =>
  HttpServerResponse.jsonUnsafe(body, { status: body.status, ...(headers ? { headers } : {}) })

const statusCodes: Record<number, string> = {
  400: "invalid_parameters",
  401: "unauthorized",
  402: "payment_required",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  406: "not_acceptable",
  408: "request_timeout",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  422: "validation_error",
  429: "rate_limited",
  500: "internal_error",
  503: "unavailable"
}

const isJson = (response: HttpServerResponse.HttpServerResponse) => (response.headers["content-type"] ?? "").startsWith("application/json")

const rateHeaders = (d: RateDecision): Record<string, string> => ({
  "x-ratelimit-limit": String(d.limit),
  "x-ratelimit-remaining": String(d.remaining),
  "x-ratelimit-reset": String(d.reset)
})

/** The path of a request URL, without its query. */
const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return q === -1 ? url : url.slice(0, q)
}

/** Whether a path is the management API's, as the router matches it (any case, repeated slashes). */
const isManagementPath = (url: string) => {
  const path = pathOf(url).toLowerCase().replace(/\/{2,}/g, "/")
  return path === "/api/v1" || path.startsWith("/api/v1/")
}

/** Whether a path is the engine API's (its reads; its signal routes are written, not read). */
const isEnginePath = (path: string) => path.toLowerCase().startsWith("/engine/")

const refuseText = (where: string) => Effect.fail(BadRequest.of(`the request ${where} ${unstorableTextMessage}`, "invalid_parameters"))

/**
 * What every body must be before an API reads it: not compressed (no `Content-Encoding` other
 * than identity: 415, rather than an `invalid_json` for a gzipped body, or a plain one labelled
 * gzip taken as it is), and UTF-8 (bytes that are not would be read as U+FFFD and stored as that,
 * not as what was sent). A body this cannot read is left to the API, which answers for it.
 */
const checkBody = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const coding = request.headers["content-encoding"]?.trim().toLowerCase()
  if (coding !== undefined && coding !== "" && coding !== "identity") {
    return yield* UnsupportedMediaType.of(`Content-Encoding ${coding} is not supported; send the body uncompressed`)
  }
  if (request.method === "GET" || request.method === "HEAD") return
  const bytes = yield* Effect.option(request.arrayBuffer)
  if (Option.isSome(bytes) && !isUtf8(bytes.value)) {
    return yield* BadRequest.of("the request body is not valid UTF-8", "invalid_parameters")
  }
})

/**
 * Text PostgreSQL cannot store (src/domain/text.ts) is refused in the URL of every request and
 * in the body of every management request, as is a management body nested too deep. Engine
 * bodies are checked by their schemas instead, so that a batch refuses only the signal that has
 * it. A body this cannot read or parse is left to the API, which answers for it.
 */
const checkText = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  for (const segment of pathOf(request.url).split("/")) {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      return yield* Effect.fail(BadRequest.of("the request path is not valid percent-encoded UTF-8", "invalid_parameters"))
    }
    if (!isStorableText(decoded)) return yield* refuseText("path")
  }
  const q = request.url.indexOf("?")
  if (q !== -1) {
    for (const [key, value] of new URLSearchParams(request.url.slice(q + 1))) {
      if (!isStorableText(key) || !isStorableText(value)) return yield* refuseText("query")
    }
  }
  if (request.method === "GET" || request.method === "HEAD" || !isManagementPath(request.url)) return
  const text = yield* Effect.option(request.text)
  if (Option.isNone(text)) return
  let body: unknown
  try {
    body = JSON.parse(text.value)
  } catch {
    return
  }
  const problem = jsonProblem(body)
  if (problem !== undefined) return yield* Effect.fail(BadRequest.of(`the request body ${problem}`, "invalid_parameters"))
})

/**
 * A route the gateway serves itself, past the router and the HttpApi, when a request's method and
 * path are exactly these (its other spellings still reach the router). For a hot path whose
 * per-request cost matters: src/http/engine/ingest-route.ts.
 */
export interface DirectRoute {
  readonly method: string
  readonly path: string
  readonly handler: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>
  /**
   * The route reads its body and answers its errors itself, in a protocol of its own (OTLP:
   * binary and gzipped bodies, error bodies that are not the envelope): the body and text checks
   * and the envelope completion are left out.
   */
  readonly raw?: boolean
}

/**
 * The global middleware, and the one place an error envelope is completed:
 * - mints the request id (`X-Request-Id` on every response, `request_id` in every error);
 * - counts management requests against the org's plan limits (or the caller's address when it
 *   has no valid key), so every management response has the X-RateLimit-* headers;
 * - turns what the API layer never sees (unknown routes, wrong methods, unreadable bodies,
 *   defects, the framework's own bare error responses) into the envelope;
 * - serves the direct routes, whose failures become envelopes here too.
 */
export const gateway = <E = never, R = never, E2 = never, R2 = never>(
  routes: RouteTable,
  direct?: Effect.Effect<ReadonlyArray<DirectRoute>, E, R>,
  /**
   * Waits until the projections of the verdicts this node gave are committed (they are written
   * behind the verdicts): awaited before every management request and every engine read, so a
   * client reads what it was answered about.
   */
  settled?: Effect.Effect<Effect.Effect<void>, E2, R2>
) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const database = yield* DatabaseHealth
      // With the database out of reach nothing commits: a read does not wait for commits (it
      // fails at once), and a wait under way ends when the database goes.
      const settledOnce = settled === undefined ? Effect.void : yield* settled
      const settle = Effect.suspend(() => (database.isDown() ? Effect.void : Effect.raceFirst(settledOnce, database.down)))
      const authenticator = yield* Authenticator
      const limiter = yield* RateLimiter
      const sessions = yield* DashboardSessions
      const anonymousWindows = anonymousRateWindows(
        yield* Config.Int("MANAGEMENT_ANONYMOUS_RATE_LIMIT").pipe(Config.withDefault(60))
      )
      const draining = yield* Draining
      const directRoutes = direct === undefined ? [] : yield* direct
      const metrics = yield* Metrics
      const managementRefusals = metrics.rateLimited.labels({ api: "management" })
      // By method, route template and status: a bounded set.
      const byRoute = childrenByKey<{
        readonly requests: ReturnType<typeof metrics.httpRequests.labels>
        readonly duration: ReturnType<typeof metrics.httpDuration.labels>
      }>()
      /** An access line per request (ACCESS_LOG, default off: the ingest path would log every signal). */
      const accessLog = yield* Config.Boolean("ACCESS_LOG").pipe(Config.withDefault(false))
      const outageLog = makeOutageLog()

      const failureResponse = (cause: Cause.Cause<unknown>, requestId: string) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const reason = cause.reasons.find((r) => r._tag === "Fail" || r._tag === "Die")
          const error: unknown = reason?._tag === "Fail" ? reason.error : reason?._tag === "Die" ? reason.defect : undefined
          let apiError: ApiError
          if (isApiError(error)) {
            apiError = error
          } else if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound") {
            const path = pathOf(request.url)
            const allowed = routes.methodsFor(path)
            // The router refused a path of a route that has this method (an id over its length limit, say).
            if (allowed.includes(request.method)) return envelopeResponse(envelopeOf(NotFound.of(`nothing at ${path}`), requestId))
            if (allowed.length > 0) {
              const body = envelopeOf(MethodNotAllowed.of(`${request.method} is not allowed on ${path}`), requestId)
              return envelopeResponse(body, { allow: allowed.join(", ") })
            }
            apiError = NotFound.of(`no route for ${request.method} ${path}`, "route_not_found")
          } else if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError") {
            apiError = error.reason.reason === "BodyTooLarge"
              ? PayloadTooLarge.of("the request body is too large")
              : BadRequest.of("the request body could not be read", "invalid_body")
          } else if (HttpApiError.HttpApiSchemaError.is(error)) {
            apiError = BadRequest.of(`invalid ${error.kind.toLowerCase()}: ${error.cause.message}`)
          } else if (isDatabaseUnavailable(error)) {
            yield* outageLog(error)
            apiError = databaseUnavailable()
          } else {
            yield* Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
            apiError = InternalError.of()
          }
          // A 503 is always worth retrying shortly (a dependency down, an outcome not known yet).
          return envelopeResponse(
            envelopeOf(apiError, requestId),
            apiError.status === 503 ? { "retry-after": String(retryAfterSeconds) } : undefined
          )
        })

      /** Bare error responses from the framework (415, empty 4xx) become envelopes too. */
      const completeEnvelope = (response: HttpServerResponse.HttpServerResponse, requestId: string) =>
        response.status >= 400 && !isJson(response)
          ? HttpServerResponse.setHeaders(
            envelopeResponse({
              error: response.status === 415
                ? `unsupported content type; send application/json`
                : `the request failed with status ${response.status}`,
              code: statusCodes[response.status] ?? "error",
              status: response.status,
              request_id: requestId
            }),
            Object.fromEntries(Object.entries(response.headers).filter(([k]) => k !== "content-type" && k !== "content-length"))
          )
          : response

      /**
       * Who a management request counts against: its key's org, or a signed-in person's (the
       * dashboard session's cookie, when no key is sent). A cookie of no live session counts as
       * no credential: its 256 random bits are not guessed, and a tab left open after its
       * session expired must not use up its address's allowance for the keys behind it.
       */
      const managementCaller = (request: HttpServerRequest.HttpServerRequest) =>
        Effect.flatMap(authenticator.apiKey(bearerCredential(request.headers.authorization)), (auth) => {
          const sessionId = auth._tag === "Missing" ? sessionIdOf(request.headers.cookie) : undefined
          if (sessionId === undefined) return Effect.succeed(auth)
          return Effect.map(
            sessions.caller(sessionId),
            (caller): Authentication<{ orgId: string; environment: string; plan: Plan; rateLimits: RateLimitOverrides }> =>
              caller === undefined ? { _tag: "Invalid" } : { _tag: "Valid", principal: sessionPrincipal(caller) }
          )
        })

      /**
       * A management request's key and rate limit, then `serve` if it may go on. A valid key counts
       * against its org; a wrong one against the caller's address (the guessing that is throttled).
       * No key at all is answered 401 (or the public OpenAPI document) before any throttling: it
       * costs no lookup and is not an attempt, so it stays 401 whatever is down (its rate headers
       * are left out when the counters cannot be read).
       */
      const admitManagement = (
        request: HttpServerRequest.HttpServerRequest,
        requestId: string,
        facts: RequestFacts,
        serve: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>
      ) =>
        Effect.gen(function*() {
          const auth = yield* managementCaller(request)
          const address = `ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`
          if (auth._tag === "Missing") {
            const peeked = yield* Effect.exit(database.isDown() ? Effect.fail("the database is down") : limiter.peek(address, anonymousWindows))
            const response = yield* serve
            return peeked._tag === "Success" ? HttpServerResponse.setHeaders(response, rateHeaders(peeked.value)) : response
          }
          if (auth._tag === "Valid") facts.org_id = auth.principal.orgId
          const decision = auth._tag === "Valid"
            ? yield* limiter.consume(
              `org:${auth.principal.orgId}:${auth.principal.environment}`,
              managementRateWindows(auth.principal.plan, auth.principal.rateLimits)
            )
            : yield* limiter.consume(address, anonymousWindows)
          if (decision.allowed) return HttpServerResponse.setHeaders(yield* serve, rateHeaders(decision))
          managementRefusals.inc()
          const refused = TooManyRequests.of(`rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`)
          return envelopeResponse(envelopeOf(refused, requestId), { ...rateHeaders(decision), "retry-after": String(decision.retryAfter) })
        })

      return (httpEffect) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          // From when the server read the request, so that a wait for its handler counts too.
          const started = receivedAt(request.source) ?? performance.now()
          const requestId = makeRequestId()
          const facts: RequestFacts = {}
          const path = pathOf(request.url)
          const directRoute = directRoutes.find((r) => r.method === request.method && r.path === path)
          const route: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> = directRoute
            ? Effect.provideService(directRoute.handler, HttpServerRequest.HttpServerRequest, request)
            : httpEffect
          // What handlers add to the response (the engine's rate-limit headers), kept for errors too.
          const extraHeaders: Record<string, string> = {}
          const reads = isManagementPath(request.url) || (request.method === "GET" && isEnginePath(path))
          const checked = directRoute?.raw ? route : checkBody.pipe(Effect.andThen(checkText), Effect.andThen(reads ? Effect.andThen(settle, route) : route))
          const serve = checked.pipe(
            Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : failureResponse(cause, requestId)),
            Effect.map((response) => (directRoute?.raw ? response : completeEnvelope(response, requestId))),
            Effect.map((response) => (Object.keys(extraHeaders).length === 0 ? response : HttpServerResponse.setHeaders(response, extraHeaders))),
            Effect.provideService(RequestId, requestId),
            Effect.provideService(ResponseHeaders, extraHeaders),
            Effect.provideService(RequestFacts, facts),
            Effect.provideService(RequestReceived, started)
          )

          let response: HttpServerResponse.HttpServerResponse
          if (isManagementPath(request.url)) {
            // The key lookup and the rate limiter read the database: their failures (an outage)
            // are answered with the envelope like any handler's.
            response = yield* admitManagement(request, requestId, facts, serve).pipe(
              Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : failureResponse(cause, requestId))
            )
          } else {
            response = yield* serve
          }
          const withId = HttpServerResponse.setHeader(response, "x-request-id", requestId)
          // The route's template, not the path: a label per id would grow without bound.
          const template = directRoute ? directRoute.path : routes.templateOf(request.method, path)
          const seconds = secondsSince(started)
          const children = byRoute(`${request.method} ${template} ${response.status}`, () => ({
            requests: metrics.httpRequests.labels({ method: request.method, route: template, status: response.status }),
            duration: metrics.httpDuration.labels({ method: request.method, route: template })
          }))
          children.requests.inc()
          children.duration.observe(seconds)
          if (accessLog) {
            yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
              request_id: requestId,
              method: request.method,
              route: template,
              status: response.status,
              duration_ms: Math.round(seconds * 1e4) / 10,
              ...facts
            }))
          }
          return draining.started() ? HttpServerResponse.setHeader(withId, "connection", "close") : withId
        })
    }),
    { global: true }
  )
