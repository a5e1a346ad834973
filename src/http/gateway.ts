import { Cause, Effect, Option } from "effect"
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
  type ApiError,
  type ErrorEnvelope
} from "../domain/errors.ts"
import { makeRequestId } from "../domain/ids.ts"
import { anonymousRateWindows, managementRateWindows } from "../domain/plans.ts"
import { RateLimiter, type RateDecision } from "../store/rate-limits.ts"
import { Authenticator } from "./auth.ts"
import { RequestId } from "./request-id.ts"
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

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  (response.headers["content-type"] ?? "").startsWith("application/json")

const bearer = (authorization: string | undefined): string => {
  const match = authorization === undefined ? null : /^bearer +(.+)$/i.exec(authorization)
  return match?.[1]?.trim() ?? ""
}

const rateHeaders = (d: RateDecision): Record<string, string> => ({
  "x-ratelimit-limit": String(d.limit),
  "x-ratelimit-remaining": String(d.remaining),
  "x-ratelimit-reset": String(d.reset)
})

const isManagementPath = (url: string) => url === "/api/v1" || url.startsWith("/api/v1/") || url.startsWith("/api/v1?")

/**
 * The global middleware, and the one place an error envelope is completed:
 * - mints the request id (`X-Request-Id` on every response, `request_id` in every error);
 * - counts management requests against the org's plan limits (or the caller's address when it
 *   has no valid key), so every management response has the X-RateLimit-* headers;
 * - turns what the API layer never sees (unknown routes, wrong methods, unreadable bodies,
 *   defects, the framework's own bare error responses) into the envelope.
 */
export const gateway = (routes: RouteTable) =>
  HttpRouter.middleware(
    Effect.gen(function*() {
      const authenticator = yield* Authenticator
      const limiter = yield* RateLimiter

      const failureResponse = (cause: Cause.Cause<unknown>, requestId: string) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const reason = cause.reasons.find((r) => r._tag === "Fail" || r._tag === "Die")
          const error: unknown = reason?._tag === "Fail" ? reason.error : reason?._tag === "Die" ? reason.defect : undefined
          let apiError: ApiError
          if (isApiError(error)) {
            apiError = error
          } else if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound") {
            const path = request.url.split("?")[0] ?? request.url
            const allowed = routes.methodsFor(path)
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
          } else {
            yield* Effect.logError("request failed", cause).pipe(Effect.annotateLogs({ request_id: requestId }))
            apiError = InternalError.of()
          }
          return envelopeResponse(envelopeOf(apiError, requestId))
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

      return (httpEffect) =>
        Effect.gen(function*() {
          const requestId = makeRequestId()
          const request = yield* HttpServerRequest.HttpServerRequest
          const serve = httpEffect.pipe(
            Effect.catchCause((cause) =>
              Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : failureResponse(cause, requestId)
            ),
            Effect.map((response) => completeEnvelope(response, requestId)),
            Effect.provideService(RequestId, requestId)
          )

          let response: HttpServerResponse.HttpServerResponse
          if (isManagementPath(request.url)) {
            const auth = yield* authenticator.apiKey(bearer(request.headers.authorization))
            const decision = auth._tag === "Valid"
              ? yield* limiter.consume(
                `org:${auth.principal.orgId}:${auth.principal.environment}`,
                managementRateWindows(auth.principal.plan, auth.principal.rateLimits)
              )
              : yield* limiter.consume(`ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`, anonymousRateWindows)
            if (decision.allowed) {
              response = HttpServerResponse.setHeaders(yield* serve, rateHeaders(decision))
            } else {
              const refused = TooManyRequests.of(`rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`)
              response = envelopeResponse(envelopeOf(refused, requestId), {
                ...rateHeaders(decision),
                "retry-after": String(decision.retryAfter)
              })
            }
          } else {
            response = yield* serve
          }
          return HttpServerResponse.setHeader(response, "x-request-id", requestId)
        })
    }),
    { global: true }
  )
