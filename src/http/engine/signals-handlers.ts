import { Clock, Config, Effect, Result, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { BadRequest, Conflict, ServiceUnavailable } from "../../domain/errors.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import type { SignalRecord } from "../../domain/records.ts"
import { Ingress } from "../../engine/ingress.ts"
import { NotAppended, pendingMessages, type Submitted } from "../../engine/ingress-answers.ts"
import { Pricing } from "../../engine/pricing.ts"
import { RuleCache } from "../../engine/rule-cache.ts"
import { EnginePrincipal } from "../contract.ts"
import { EngineApi } from "./api.ts"
import { BatchSignalInput, type SignalsBatchAccepted } from "./signals-api.ts"
import { SignalLimits } from "./signal-limits.ts"
import { toSignalRecord } from "./signals-records.ts"

const decodeSignal = Schema.decodeUnknownResult(BatchSignalInput)

const MaxMetadataBytes = Config.Int("MAX_METADATA_BYTES").pipe(Config.withDefault(16_384))

/**
 * The log did not take the request's signals. Only when they are certainly not in it does the
 * answer say so (`log_unavailable`); when they may be (an append that timed out stays in flight)
 * it is `outcome_unknown`, and a client sends them again under their idempotency keys. Either
 * way it carries the blocks judged from the signals alone, which hold whatever became of them.
 */
const logUnavailable = (e: NotAppended) => {
  const verdicts = e.judged.some((j) => j !== undefined)
    ? e.judged.map((
      j
    ) => (j === undefined
      ? null
      : {
        ok: false as const,
        action: j.action === "redact" ? "redact" as const : "block" as const,
        rule_id: j.rule_id!,
        ...(j.message !== undefined ? { message: j.message } : {})
      })
    )
    : undefined
  return Effect.fail(
    e.notWritten
      ? ServiceUnavailable.of(`the signal log is unavailable (${e.message}); the signals were not accepted: retry`, "log_unavailable", verdicts)
      : ServiceUnavailable.of(
        `the signal log did not confirm the append (${e.message}); the signals may be recorded: send them again with their idempotency keys, and each counts once`,
        "outcome_unknown",
        verdicts
      )
  )
}

/** The answer for one submitted signal, as both endpoints give it. */
const accepted = (submitted: Submitted) =>
  submitted._tag === "Pending"
    ? {
      ok: true,
      signal_id: submitted.signal_id,
      action: "pending" as const,
      reason: submitted.reason,
      message: pendingMessages[submitted.reason]
    }
    : submitted.verdict

/**
 * POST /signals once its caller is authenticated and its request decoded: the idempotency keys'
 * agreement, the record, the append and the wait for the verdict. The route is served two ways
 * (through the HttpApi, and directly: src/http/engine/ingest-route.ts); both call this.
 */
export const makeIngestOne = Effect.gen(function*() {
  const ingress = yield* Ingress
  const pricing = yield* Pricing
  const rules = yield* RuleCache
  const maxMetadataBytes = yield* MaxMetadataBytes
  const limits = yield* SignalLimits
  return (principal: LicensePrincipal, headerKey: string | undefined, payload: typeof BatchSignalInput.Type) =>
    Effect.gen(function*() {
      if (headerKey !== undefined && payload.idempotency_key !== undefined && headerKey !== payload.idempotency_key) {
        // Each is valid alone; together they name two signals (a rule the document cannot state;
        // the engine API answers no 422, spec §7).
        return yield* Conflict.of("the Idempotency-Key header and the body's idempotency_key differ; send one of them", "conflicting_idempotency_keys")
      }
      yield* limits.take(principal, 1)
      const now = yield* Clock.currentTimeMillis
      const record = toSignalRecord(
        headerKey === undefined ? payload : { ...payload, idempotency_key: headerKey },
        { principal, pricing, maxMetadataBytes, now, rulesVersion: rules.version() }
      )
      if (Result.isFailure(record)) return yield* record.failure
      const submitted = yield* ingress.submit(record.success).pipe(Effect.catchTag("NotAppended", logUnavailable))
      return accepted(submitted)
    })
})

export const SignalsHandlers = HttpApiBuilder.group(EngineApi, "signals", (handlers) =>
  Effect.gen(function*() {
    const ingress = yield* Ingress
    const pricing = yield* Pricing
    const rules = yield* RuleCache
    const maxMetadataBytes = yield* MaxMetadataBytes
    const ingestOne = yield* makeIngestOne
    const limits = yield* SignalLimits

    const context = Effect.gen(function*() {
      const principal = yield* EnginePrincipal
      const now = yield* Clock.currentTimeMillis
      return { principal, pricing, maxMetadataBytes, now, rulesVersion: rules.version() }
    })

    return handlers
      .handle("ingest", ({ headers, payload }) => Effect.flatMap(EnginePrincipal, (principal) => ingestOne(principal, headers["idempotency-key"], payload)))
      .handle("ingestBatch", ({ payload }) =>
        Effect.gen(function*() {
          // Not in the endpoint's documented headers (it is refused), so read from the request.
          const request = yield* HttpServerRequest.HttpServerRequest
          if (request.headers["idempotency-key"] !== undefined) {
            // Taken as the batch's key it would make every signal one (or be silently ignored).
            return yield* BadRequest.of("a batch takes no Idempotency-Key header: give each signal its idempotency_key")
          }
          const ctx = yield* context
          // Before any signal is decoded: a refused flood costs no more than its JSON.
          yield* limits.take(ctx.principal, payload.signals.length)
          // Each element on its own: one invalid signal is answered as such, the others go on.
          const checked = payload.signals.map((element): Result.Result<SignalRecord, BadRequest> => {
            const decoded = decodeSignal(element)
            return Result.isFailure(decoded)
              ? Result.fail(BadRequest.of(`invalid signal: ${decoded.failure.message}`))
              : toSignalRecord(decoded.success, ctx)
          })
          const records = checked.filter(Result.isSuccess).map((r) => r.success)
          const submitted = records.length === 0
            ? []
            : yield* ingress.submitMany(records).pipe(Effect.catchTag("NotAppended", (e) => {
              // One entry per signal of the request, the invalid ones (never submitted) included.
              let k = 0
              const judged = checked.map((r) => (Result.isFailure(r) ? undefined : e.judged[k++]))
              return logUnavailable(new NotAppended({ message: e.message, notWritten: e.notWritten, judged }))
            }))
          let next = 0
          const body: typeof SignalsBatchAccepted.Encoded = {
            results: checked.map((r) =>
              Result.isFailure(r)
                ? { ok: false as const, error: { code: r.failure.code, error: r.failure.error } }
                : accepted(submitted[next++]!)
            )
          }
          // Already in its encoded form (the type says so), so it is serialized as it is: the
          // schema's encode would walk up to 500 results only to give back the same values.
          return HttpServerResponse.jsonUnsafe(body)
        }))
  }))
