import { Effect, Result, Schema, SchemaIssue } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { Authenticator, authorizeEngine } from "../auth.ts"
import { bearerCredential } from "../bearer.ts"
import { describeSchemaError } from "../envelope.ts"
import { BatchSignalInput, IngestHeaders, SignalAccepted } from "./signals-api.ts"
import { SignalLimits } from "./signal-limits.ts"
import { makeIngestOne } from "./signals-handlers.ts"

/** The one route served directly: its method and path, exactly as clients send them. */
export const ingestRoute = { method: "POST", path: "/engine/v1/signals" } as const

const mediaType = (contentType: string): string => {
  const normalized = contentType.toLowerCase().trim()
  const index = normalized.indexOf(";")
  return index === -1 ? normalized : normalized.slice(0, index).trim()
}

const decodeHeaders = Schema.decodeUnknownResult(IngestHeaders)
const decodePayload = Schema.decodeUnknownResult(BatchSignalInput)
const encodeAccepted = Schema.encodeSync(SignalAccepted)

const refused = (kind: "Headers" | "Payload", cause: Schema.SchemaError) =>
  Effect.fail(describeSchemaError(new HttpApiError.HttpApiSchemaError({ kind, cause })))

/**
 * POST /engine/v1/signals, served without the HttpApi's per-request machinery: the hot path of
 * every adapter, where that machinery (its fibers, context merges, middleware and encoders) cost
 * ~40 µs of a ~135 µs request (docs/benchmarks.md, "The ingest route served directly"). It
 * answers exactly as the HttpApi endpoint does, which stays its contract (the OpenAPI document,
 * and the route the router still has for the path's other spellings), and in the same order:
 * the license key and its plan first, then the headers, the content type, the body. Failures
 * are the API's errors, which the gateway turns into envelopes as it does for every route;
 * test/e2e/ingest-route.test.ts holds the two ways of serving it to the same answers.
 */
export const makeIngestRoute = Effect.gen(function*() {
  const authenticator = yield* Authenticator
  const ingestOne = yield* makeIngestOne
  const limits = yield* SignalLimits
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const principal = yield* authorizeEngine(authenticator, bearerCredential(request.headers.authorization), "signals")
    yield* limits.admit(principal)
    const headers = decodeHeaders(request.headers)
    if (Result.isFailure(headers)) return yield* refused("Headers", headers.failure)
    const contentType = mediaType(request.headers["content-type"] ?? "application/json")
    if (contentType !== "application/json") {
      // The framework's bare answer, which the gateway completes into the 415 envelope.
      return HttpServerResponse.text(`Unsupported content-type: ${contentType}`, { status: 415 })
    }
    const text = yield* Effect.orDie(request.text)
    let body: unknown
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      return yield* refused("Payload", new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))
    }
    const payload = decodePayload(body)
    if (Result.isFailure(payload)) return yield* refused("Payload", payload.failure)
    const answer = yield* ingestOne(principal, headers.success["idempotency-key"], payload.success)
    return HttpServerResponse.jsonUnsafe(encodeAccepted(answer))
  })
})
