import { gunzipSync } from "node:zlib"
import { Cause, Clock, Config, Effect, Result, Schema } from "effect"
import { HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { isApiError } from "../../domain/errors.ts"
import type { FleetPrincipal } from "../../domain/fleet.ts"
import { logRecordOutcomes, type RecordOutcome } from "../../domain/otlp-events.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { productivityPoints, type ToolMetricPoint } from "../../domain/tool-metrics.ts"
import type { SignalRecord } from "../../domain/records.ts"
import { Ingress } from "../../engine/ingress.ts"
import { Pricing } from "../../engine/pricing.ts"
import { RuleCache } from "../../engine/rule-cache.ts"
import { isDatabaseUnavailable } from "../../store/database-health.ts"
import { ToolMetrics } from "../../store/tool-metrics-repo.ts"
import { Authenticator } from "../auth.ts"
import { retryAfterSeconds } from "../database-outage.ts"
import type { DirectRoute } from "../gateway.ts"
import { contentTypeOf, decodeRequest, encodeResponse, encodeStatus, encodingOf, type OtlpEncoding, type OtlpSignal } from "./otlp-codec.ts"
import { type Claimed, makeFleetIdentities } from "./fleet-identity.ts"
import { isFleet, otlpPrincipal } from "./otlp-identity.ts"
import { BatchSignalInput, maxBatchSignals } from "./signals-api.ts"
import { SignalLimits } from "./signal-limits.ts"
import { toSignalRecord } from "./signals-records.ts"

/** Where OTLP exporters send (OTEL_EXPORTER_OTLP_ENDPOINT=<service>/engine/v1/otlp). */
export const otlpRoutes = [
  { method: "POST", path: "/engine/v1/otlp/v1/logs", signal: "logs" },
  { method: "POST", path: "/engine/v1/otlp/v1/metrics", signal: "metrics" },
  { method: "POST", path: "/engine/v1/otlp/v1/traces", signal: "traces" }
] as const satisfies ReadonlyArray<{ method: string; path: string; signal: OtlpSignal }>

/** A gzipped body may unpack to at most this many bytes (a small bomb must not fill the memory). */
export const maxUnpackedBytes = 16 * 1024 * 1024

const decodeSignal = Schema.decodeUnknownResult(BatchSignalInput)
const MaxMetadataBytes = Config.Int("MAX_METADATA_BYTES").pipe(Config.withDefault(16_384))

/** An answer of OTLP/HTTP's own: the status, and a Status (failure) or Export*ServiceResponse body. */
class OtlpAnswer {
  readonly status: number
  readonly grpcCode: number
  readonly message: string
  readonly headers: Record<string, string>
  constructor(status: number, grpcCode: number, message: string, headers: Record<string, string> = {}) {
    this.status = status
    this.grpcCode = grpcCode
    this.message = message
    this.headers = headers
  }
}

/** google.rpc.Code of each HTTP status the route answers (OTLP/HTTP carries both). */
const grpcCodes: Record<number, number> = { 400: 3, 401: 16, 403: 7, 413: 8, 415: 3, 429: 8, 500: 13, 503: 14 }

const fail = (status: number, message: string, headers?: Record<string, string>) =>
  Effect.fail(new OtlpAnswer(status, grpcCodes[status] ?? 2, message, headers))

const respond = (status: number, encoding: OtlpEncoding, body: Uint8Array | string, headers: Record<string, string> = {}) =>
  HttpServerResponse.uint8Array(typeof body === "string" ? new TextEncoder().encode(body) : body, {
    status,
    contentType: contentTypeOf(encoding),
    headers
  })

/** Any failure as an OtlpAnswer: the engine API's errors keep their status, an outage is a retryable 503. */
const asAnswer = (cause: Cause.Cause<unknown>): OtlpAnswer => {
  const reason = cause.reasons.find((r) => r._tag === "Fail" || r._tag === "Die")
  const error: unknown = reason?._tag === "Fail" ? reason.error : reason?._tag === "Die" ? reason.defect : undefined
  if (error instanceof OtlpAnswer) return error
  if (isApiError(error)) {
    const retry = error.status === 503 ? { "retry-after": String(retryAfterSeconds) } : undefined
    return new OtlpAnswer(error.status, grpcCodes[error.status] ?? 2, error.error, retry)
  }
  if (isDatabaseUnavailable(error)) {
    return new OtlpAnswer(503, 14, "the database is unavailable; retry", { "retry-after": String(retryAfterSeconds) })
  }
  if (HttpServerError.isHttpServerError(error) && error.reason._tag === "RequestParseError") {
    return error.reason.reason === "BodyTooLarge"
      ? new OtlpAnswer(413, 8, "the request body is too large; export smaller batches")
      : new OtlpAnswer(400, 3, "the request body could not be read")
  }
  return new OtlpAnswer(500, 13, "internal error")
}

/** The body's bytes, unpacked when gzipped (the compressions OTLP exporters offer: gzip, none). */
const bodyBytes = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const coding = (request.headers["content-encoding"] ?? "identity").trim().toLowerCase()
    if (coding !== "identity" && coding !== "" && coding !== "gzip") {
      return yield* fail(415, `Content-Encoding ${coding} is not supported; send gzip or none`)
    }
    const bytes = new Uint8Array(yield* request.arrayBuffer)
    if (coding !== "gzip") return bytes
    try {
      return new Uint8Array(gunzipSync(bytes, { maxOutputLength: maxUnpackedBytes }))
    } catch (e) {
      return yield* (e instanceof RangeError
        ? fail(413, `the request body unpacks to more than ${maxUnpackedBytes} bytes; export smaller batches`)
        : fail(400, "the request body is not valid gzip"))
    }
  })

/**
 * POST /engine/v1/otlp/v1/{logs,metrics}: OTLP/HTTP, served directly by the gateway (its body is
 * binary or gzipped, and every answer is OTLP's own, never the engine API's envelope). Logs: the
 * coding tools' events become signals (src/domain/otlp-events.ts), checked and appended as a
 * batch of POST /signals/batch is, under their idempotency keys, so an exporter's retry counts
 * nothing twice; records the engine cannot take are reported as partial success. Metrics: the
 * productivity counters (src/domain/tool-metrics.ts) are kept point by point, the rest (usage
 * counters the log events already carry request by request) acknowledged; traces acknowledged.
 */
export const makeOtlpRoutes = Effect.gen(function*() {
  const authenticator = yield* Authenticator
  const limits = yield* SignalLimits
  const ingress = yield* Ingress
  const pricing = yield* Pricing
  const rules = yield* RuleCache
  const toolMetrics = yield* ToolMetrics
  const maxMetadataBytes = yield* MaxMetadataBytes
  const identities = yield* makeFleetIdentities

  const appendSignals = Effect.fnUntraced(function*(request: Record<string, unknown>, caller: LicensePrincipal | FleetPrincipal) {
    const outcomes = logRecordOutcomes(request)
    const claims = isFleet(caller) ? yield* claimsOf(caller, outcomes) : undefined
    const reasons: Array<string> = []
    // In the batch's order, each with its user's principal (a fleet's batch may hold several users').
    const records: Array<{ readonly principal: LicensePrincipal; readonly record: SignalRecord }> = []
    const now = yield* Clock.currentTimeMillis
    const rulesVersion = rules.version()
    for (const outcome of outcomes) {
      if (outcome._tag === "Rejected") reasons.push(outcome.reason)
      if (outcome._tag !== "Signal") continue
      const claim = claims?.get(outcome.identity?.trim() ?? "")
      if (claim?._tag === "Refused") {
        reasons.push(`${outcome.signal.type}: ${claim.reason}`)
        continue
      }
      const principal = claim?._tag === "Member" ? claim.principal : caller as LicensePrincipal
      const context = { principal, pricing, maxMetadataBytes, now, rulesVersion }
      const decoded = decodeSignal(outcome.signal)
      const record = Result.isFailure(decoded)
        ? Result.fail(`${outcome.signal.type}: ${decoded.failure.message}`)
        : Result.mapError(toSignalRecord(decoded.success, context), (e) => `${outcome.signal.type}: ${e.error}`)
      if (Result.isFailure(record)) {
        reasons.push(record.failure)
        continue
      }
      records.push({ principal, record: record.success })
    }
    // In appends of a batch's size; each counts against its user's signal limits. A 429 or 503
    // midway leaves the earlier appends in the log: the exporter's retry finds them duplicates.
    for (let i = 0; i < records.length; i += maxBatchSignals) {
      const chunk = records.slice(i, i + maxBatchSignals)
      const perUser = new Map<string, { readonly principal: LicensePrincipal; count: number }>()
      for (const { principal } of chunk) {
        const counted = perUser.get(principal.userId) ?? { principal, count: 0 }
        counted.count++
        perUser.set(principal.userId, counted)
      }
      for (const { count, principal } of perUser.values()) yield* limits.take(principal, count)
      yield* ingress.submitMany(chunk.map((r) => r.record)).pipe(
        Effect.catchTag(
          "NotAppended",
          (e) => fail(503, `the signal log did not take the records (${e.message}); retry`, { "retry-after": String(retryAfterSeconds) })
        )
      )
    }
    return reasons
  })

  /** Each identity the signals of a fleet's batch claim, resolved once (refused ones counted per record). */
  const claimsOf = Effect.fnUntraced(function*(fleet: FleetPrincipal, outcomes: ReadonlyArray<RecordOutcome>) {
    const counts = new Map<string, number>()
    for (const outcome of outcomes) {
      if (outcome._tag !== "Signal") continue
      const identity = outcome.identity?.trim() ?? ""
      counts.set(identity, (counts.get(identity) ?? 0) + 1)
    }
    const claims = new Map<string, Claimed>()
    for (const [identity, records] of counts) {
      claims.set(identity, yield* identities.resolve(fleet, identity === "" ? undefined : identity, records))
    }
    return claims
  })

  /**
   * Keeps the productivity counters: a license key's are its user's; a fleet's are attributed point
   * by point by the identity they carry, and a refused identity's points are rejected (its reasons).
   */
  const recordPoints = Effect.fnUntraced(function*(points: ReadonlyArray<ToolMetricPoint>, caller: LicensePrincipal | FleetPrincipal) {
    const tenant = { orgId: caller.orgId, environment: caller.environment }
    if (!isFleet(caller)) return yield* Effect.as(toolMetrics.record(tenant, caller.userId, points), [] as ReadonlyArray<string>)
    const byIdentity = new Map<string, Array<ToolMetricPoint>>()
    for (const point of points) {
      const identity = point.identity?.trim() ?? ""
      byIdentity.set(identity, [...(byIdentity.get(identity) ?? []), point])
    }
    const refused: Array<string> = []
    for (const [identity, own] of byIdentity) {
      const claim = yield* identities.resolve(caller, identity === "" ? undefined : identity, own.length)
      if (claim._tag === "Refused") refused.push(...own.map(() => claim.reason))
      else yield* toolMetrics.record(tenant, claim.principal.userId, own)
    }
    return refused
  })

  const handler = (signal: OtlpSignal): DirectRoute["handler"] =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const encoding = encodingOf(request.headers["content-type"])
      return yield* Effect.gen(function*() {
        const principal = yield* otlpPrincipal(authenticator, request)
        // A fleet's records are admitted per user as they are taken (appendSignals).
        if (!isFleet(principal)) yield* limits.admit(principal)
        if (encoding === undefined) {
          return yield* fail(415, `unsupported content type; send application/x-protobuf or application/json`)
        }
        const decoded = decodeRequest(signal, encoding, yield* bodyBytes(request))
        if (!decoded.ok) return yield* fail(400, `invalid OTLP ${signal} request: ${decoded.error}`)
        if (signal === "metrics") {
          // The productivity counters are kept before the answer (a failure is a retryable 503).
          const refused = yield* recordPoints(productivityPoints(decoded.value), principal)
          const message = refused.length === 0 ? "" : `${refused.length} data points rejected: ${[...new Set(refused)].slice(0, 5).join("; ")}`
          return respond(200, encoding, encodeResponse(signal, encoding, refused.length, message))
        }
        if (signal !== "logs") return respond(200, encoding, encodeResponse(signal, encoding, 0, ""))
        const reasons = yield* appendSignals(decoded.value, principal)
        const message = reasons.length === 0 ? "" : `${reasons.length} log records rejected: ${[...new Set(reasons)].slice(0, 5).join("; ")}`
        return respond(200, encoding, encodeResponse(signal, encoding, reasons.length, message))
      }).pipe(Effect.catchCause((cause) => {
        if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
        const answer = asAnswer(cause)
        const as = encoding ?? "json"
        return Effect.succeed(respond(answer.status, as, encodeStatus(as, answer.grpcCode, answer.message), answer.headers))
      }))
    })

  return otlpRoutes.map((route): DirectRoute => ({ method: route.method, path: route.path, raw: true, handler: handler(route.signal) }))
})
