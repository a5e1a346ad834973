import { Context, Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { type HttpApiEndpoint, HttpApiError, OpenApi } from "effect/http-api"
import { BadRequest, isApiError, PayloadTooLarge, withRequestId } from "../domain/errors.ts"
import { Envelope } from "./contract.ts"
import { RequestId } from "../observability/request-id.ts"

/** A request that does not decode, as the API answers it (400; `invalid_json` for a body that is not JSON). */
export const describeSchemaError = (error: HttpApiError.HttpApiSchemaError): BadRequest => {
  const detail = error.cause.message.replace(/\s*\n\s*/g, " ")
  if (error.kind === "Payload" && detail.includes("Expected a valid JSON body")) {
    return BadRequest.of("the request body is not valid JSON", "invalid_json")
  }
  const where = { Params: "path", Headers: "headers", Query: "query", Payload: "body", Body: "body", ResponseHeaders: "headers" }[
    error.kind
  ]
  return BadRequest.of(`invalid ${where}: ${detail}`, "invalid_parameters")
}

/** Endpoints annotated deprecated (OpenApi.Deprecated) answer with a `Deprecation` header (spec §9). */
const markDeprecated = <E, R>(
  httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  endpoint: HttpApiEndpoint.Top
) =>
  Context.getOrUndefined(endpoint.annotations, OpenApi.Deprecated) === true
    ? Effect.map(httpEffect, HttpServerResponse.setHeader("deprecation", "true"))
    : httpEffect

/**
 * The outermost middleware of every API group: request decoding failures become 400, and every
 * error on its way to the wire gets this request's id. Handlers and other middleware never touch
 * either.
 */
export const EnvelopeLive = Layer.succeed(
  Envelope,
  (httpEffect, { endpoint }) =>
    Effect.catch(markDeprecated(httpEffect, endpoint), (error) =>
      Effect.gen(function*() {
        const requestId = yield* RequestId
        if (HttpApiError.HttpApiSchemaError.is(error)) return yield* withRequestId(describeSchemaError(error), requestId)
        if (HttpApiError.HttpApiPayloadTooLarge.is(error)) {
          return yield* withRequestId(PayloadTooLarge.of("the request body is too large"), requestId)
        }
        if (isApiError(error)) return yield* withRequestId(error, requestId)
        return yield* Effect.fail(error)
      }))
)
