import { Clock, Config, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BadRequest, ServiceUnavailable } from "../../domain/errors.ts"
import { makeId } from "../../domain/ids.ts"
import type { SignalRecord } from "../../domain/records.ts"
import { SignalType } from "../../domain/signals.ts"
import { Engine } from "../../engine/engine.ts"
import { Pricing } from "../../engine/pricing.ts"
import { EnginePrincipal } from "../contract.ts"
import { EngineApi } from "./api.ts"

const signalTypes: ReadonlySet<string> = new Set(SignalType.literals)

export const SignalsHandlers = HttpApiBuilder.group(EngineApi, "signals", (handlers) =>
  Effect.gen(function*() {
    const engine = yield* Engine
    const pricing = yield* Pricing
    const maxMetadataBytes = yield* Config.Int("MAX_METADATA_BYTES").pipe(Config.withDefault(16_384))

    return handlers.handle("ingest", ({ payload }) =>
      Effect.gen(function*() {
        const principal = yield* EnginePrincipal
        if (!signalTypes.has(payload.type)) {
          return yield* BadRequest.of(
            `unknown signal type "${payload.type}"; expected one of ${SignalType.literals.join(", ")}`,
            "invalid_signal_type"
          )
        }
        const metadata = payload.metadata ?? {}
        if (Buffer.byteLength(JSON.stringify(metadata)) > maxMetadataBytes) {
          return yield* BadRequest.of(`metadata is larger than ${maxMetadataBytes} bytes`, "metadata_too_large")
        }
        const now = yield* Clock.currentTimeMillis
        const record: SignalRecord = {
          v: 1,
          kind: "signal",
          org_id: principal.orgId,
          environment: principal.environment,
          user_id: principal.userId,
          ts: new Date(now).toISOString(),
          signal_id: makeId("sig", now),
          type: payload.type as SignalType,
          adapter: payload.adapter,
          client_session_id: payload.session_id,
          metadata,
          session_timeout_s: principal.sessionTimeoutS,
          cost: pricing.price({
            model: metadata.model,
            tokensIn: metadata.tokens_in ?? 0,
            tokensOut: metadata.tokens_out ?? 0,
            reportedUsd: metadata.cost_usd
          })
        }
        const submitted = yield* engine.submit(record).pipe(
          Effect.catchTag("LogUnavailable", () =>
            Effect.fail(ServiceUnavailable.of("the signal log is unavailable; the signal was not accepted, retry", "log_unavailable")))
        )
        return submitted._tag === "Processed"
          ? { ok: submitted.verdict.ok, signal_id: submitted.verdict.signal_id, session_id: submitted.verdict.session_id }
          : { ok: true, signal_id: submitted.signal_id, action: "pending" as const }
      }))
  }))
