import { Schema } from "effect"

/**
 * The errors that reach the wire, one class per HTTP status. Each encodes to the spec's
 * envelope `{error, code, status, request_id}` (spec §7) and to nothing else, so the OpenAPI
 * document and the responses agree. `request_id` is filled in by the HTTP layer (one place);
 * code that raises an error never knows or sets it.
 */
const envelope = {
  error: Schema.String.annotate({ description: "human-readable message" }),
  code: Schema.String.annotate({ description: "stable machine-readable code" }),
  status: Schema.Int.annotate({ description: "the HTTP status of the response" }),
  request_id: Schema.String.annotate({ description: "id of this request (prefix req_), also in X-Request-Id" })
}

export const ErrorEnvelope = Schema.Struct(envelope).annotate({ identifier: "Error" })
export type ErrorEnvelope = typeof ErrorEnvelope.Type

const annotations = (status: number, description: string) => ({ httpApiStatus: status, description })

const fields = (error: string, code: string, status: number) => ({ error, code, status, request_id: "" })

export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(envelope, annotations(400, "Invalid parameters")) {
  readonly _tag = "BadRequest"
  static of(error: string, code = "invalid_parameters") {
    return new BadRequest(fields(error, code, 400))
  }
}

export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(envelope, annotations(401, "Missing or invalid credential")) {
  readonly _tag = "Unauthorized"
  static of(error: string, code = "unauthorized") {
    return new Unauthorized(fields(error, code, 401))
  }
}

export class PaymentRequired extends Schema.Error<PaymentRequired>("PaymentRequired")(envelope, annotations(402, "Budget exceeded or plan limit")) {
  readonly _tag = "PaymentRequired"
  static of(error: string, code = "payment_required") {
    return new PaymentRequired(fields(error, code, 402))
  }
}

export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(envelope, annotations(403, "Insufficient scope, or a feature not available on the plan")) {
  readonly _tag = "Forbidden"
  static of(error: string, code = "forbidden") {
    return new Forbidden(fields(error, code, 403))
  }
}

export class NotFound extends Schema.Error<NotFound>("NotFound")(envelope, annotations(404, "Not found")) {
  readonly _tag = "NotFound"
  static of(error: string, code = "not_found") {
    return new NotFound(fields(error, code, 404))
  }
}

export class MethodNotAllowed extends Schema.Error<MethodNotAllowed>("MethodNotAllowed")(envelope, annotations(405, "Method not allowed on this path")) {
  readonly _tag = "MethodNotAllowed"
  static of(error: string, code = "method_not_allowed") {
    return new MethodNotAllowed(fields(error, code, 405))
  }
}

export class Conflict extends Schema.Error<Conflict>("Conflict")(envelope, annotations(409, "Conflicts with the current state")) {
  readonly _tag = "Conflict"
  static of(error: string, code = "conflict") {
    return new Conflict(fields(error, code, 409))
  }
}

export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")(envelope, annotations(413, "Request body too large")) {
  readonly _tag = "PayloadTooLarge"
  static of(error: string, code = "payload_too_large") {
    return new PayloadTooLarge(fields(error, code, 413))
  }
}

export class UnsupportedMediaType
  extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")(envelope, annotations(415, "Unsupported media type or content coding"))
{
  readonly _tag = "UnsupportedMediaType"
  static of(error: string, code = "unsupported_media_type") {
    return new UnsupportedMediaType(fields(error, code, 415))
  }
}

export class Unprocessable extends Schema.Error<Unprocessable>("Unprocessable")(envelope, annotations(422, "Validation error")) {
  readonly _tag = "Unprocessable"
  static of(error: string, code = "validation_error") {
    return new Unprocessable(fields(error, code, 422))
  }
}

export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(envelope, annotations(429, "Rate limit exceeded")) {
  readonly _tag = "TooManyRequests"
  static of(error: string, code = "rate_limited") {
    return new TooManyRequests(fields(error, code, 429))
  }
}

export class InternalError extends Schema.Error<InternalError>("InternalError")(envelope, annotations(500, "Internal server error")) {
  readonly _tag = "InternalError"
  static of(error = "internal server error", code = "internal_error") {
    return new InternalError(fields(error, code, 500))
  }
}

/**
 * A block judged from the signal alone (model_filter, org_policy) before the log was found
 * unavailable: the verdict is certain though the signal may not be recorded (extension).
 */
export const AcceptanceBlock = Schema.Struct({
  ok: Schema.Literal(false),
  action: Schema.Literals(["block", "redact"]),
  rule_id: Schema.String,
  message: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "AcceptanceBlock" })
export type AcceptanceBlock = typeof AcceptanceBlock.Type

export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(
  {
    ...envelope,
    verdicts: Schema.optionalKey(
      Schema.Array(Schema.NullOr(AcceptanceBlock)).annotate({
        description: "Extension, on the signal endpoints only: one entry per signal of the request, in order: the block " +
          "that a rule needing no per-user state (model_filter, org_policy) gives it, or null. A client enforces a block " +
          "even though the request failed, and sends the signal again later (with its idempotency key) so it is recorded."
      })
    )
  },
  annotations(503, "Unavailable: a dependency is down (code database_unavailable, log_unavailable or outcome_unknown; see Retry-After), or not ready to serve")
) {
  readonly _tag = "ServiceUnavailable"
  static of(error: string, code = "unavailable", verdicts?: ReadonlyArray<AcceptanceBlock | null>) {
    return new ServiceUnavailable({ ...fields(error, code, 503), ...(verdicts ? { verdicts } : {}) })
  }
}

export type ApiError =
  | BadRequest
  | Unauthorized
  | PaymentRequired
  | Forbidden
  | NotFound
  | MethodNotAllowed
  | Conflict
  | PayloadTooLarge
  | UnsupportedMediaType
  | Unprocessable
  | TooManyRequests
  | InternalError
  | ServiceUnavailable

const classes = [
  BadRequest,
  Unauthorized,
  PaymentRequired,
  Forbidden,
  NotFound,
  MethodNotAllowed,
  Conflict,
  PayloadTooLarge,
  UnsupportedMediaType,
  Unprocessable,
  TooManyRequests,
  InternalError,
  ServiceUnavailable
] as const

export const isApiError = (u: unknown): u is ApiError => classes.some((c) => u instanceof c)

/** The same error with the request id set; errors are immutable values. */
export const withRequestId = <E extends ApiError>(error: E, requestId: string): E => {
  const Ctor = error.constructor as new(f: ErrorEnvelope) => E
  return new Ctor({ error: error.error, code: error.code, status: error.status, request_id: requestId, ...extensionOf(error) })
}

/** The fields an error carries beyond the envelope's four (only a 503 of the signal endpoints has one). */
const extensionOf = (error: ApiError) => error._tag === "ServiceUnavailable" && error.verdicts !== undefined ? { verdicts: error.verdicts } : {}

/** The plain envelope of an error, for the places that write a response body themselves. */
export const envelopeOf = (error: ApiError, requestId: string): ErrorEnvelope => ({
  error: error.error,
  code: error.code,
  status: error.status,
  request_id: requestId,
  ...extensionOf(error)
})
