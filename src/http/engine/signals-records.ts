import { Result } from "effect"
import { driftMethod } from "../../domain/drift.ts"
import { BadRequest } from "../../domain/errors.ts"
import { makeId, signalIdForKey } from "../../domain/ids.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import type { SignalRecord } from "../../domain/records.ts"
import { countsAsUsage, SignalType } from "../../domain/signals.ts"
import type { Pricing } from "../../engine/pricing.ts"
import type { SignalInput } from "./signals-api.ts"

const signalTypes: ReadonlySet<string> = new Set(SignalType.literals)

/** The signals the goal-drift detector reads (drift-fold.ts): stamped with the detector in force. */
const judgedForDrift: ReadonlySet<string> = new Set(["user-prompt", "context-switch", "pre-tool", "post-tool", "refocus-ack"])

/**
 * The log record of one decoded signal, or why it is refused (unknown type, metadata too large).
 * Both ingestion endpoints build their records here, so a signal is checked, timestamped and
 * priced the same way whether it came alone or in a batch.
 */
export const toSignalRecord = (
  payload: typeof SignalInput.Type & { readonly idempotency_key?: string | undefined },
  context: {
    readonly principal: LicensePrincipal
    readonly pricing: Pricing["Service"]
    readonly maxMetadataBytes: number
    readonly now: number
    /** The rules version this node holds (src/engine/rule-cache.ts). */
    readonly rulesVersion?: number | undefined
  }
): Result.Result<SignalRecord, BadRequest> => {
  if (!signalTypes.has(payload.type)) {
    return Result.fail(BadRequest.of(
      `unknown signal type "${payload.type}"; expected one of ${SignalType.literals.join(", ")}`,
      "invalid_signal_type"
    ))
  }
  const { principal, pricing, maxMetadataBytes, now } = context
  const key = payload.idempotency_key
  const metadata = payload.metadata ?? {}
  if (Buffer.byteLength(JSON.stringify(metadata)) > maxMetadataBytes) {
    return Result.fail(BadRequest.of(`metadata is larger than ${maxMetadataBytes} bytes`, "metadata_too_large"))
  }
  return Result.succeed({
    v: 1,
    kind: "signal",
    org_id: principal.orgId,
    environment: principal.environment,
    user_id: principal.userId,
    ts: new Date(now).toISOString(),
    signal_id: key === undefined
      ? makeId("sig", now)
      : signalIdForKey(principal.orgId, principal.environment, principal.userId, key),
    ...(key === undefined ? {} : { idempotency_key: key }),
    type: payload.type as SignalType,
    adapter: payload.adapter,
    client_session_id: payload.session_id,
    metadata,
    session_timeout_s: principal.sessionTimeoutS,
    plan: principal.plan,
    ...(context.rulesVersion !== undefined ? { rules_version: context.rulesVersion } : {}),
    ...(principal.teamIds.length > 0 ? { team_ids: principal.teamIds } : {}),
    ...(principal.timeZone !== "UTC" ? { time_zone: principal.timeZone } : {}),
    ...(judgedForDrift.has(payload.type) ? { drift_method: driftMethod } : {}),
    ...(judgedForDrift.has(payload.type) && principal.driftPrompts !== undefined ? { drift_prompts: principal.driftPrompts } : {}),
    // A pre-tool signal is judged, not counted: it costs nothing whatever its metadata says, and
    // is priced only to know whether its model is known (block_unknown_models).
    cost: countsAsUsage(payload.type as SignalType)
      ? pricing.price({
        model: metadata.model,
        tokensIn: metadata.tokens_in ?? 0,
        tokensOut: metadata.tokens_out ?? 0,
        cacheRead: metadata.cache_read_tokens,
        cacheWrite: metadata.cache_write_tokens,
        reportedUsd: metadata.cost_usd,
        at: now
      })
      : { ...pricing.price({ model: metadata.model, tokensIn: 0, tokensOut: 0, at: now }), usd: 0, estimated: false }
  })
}
