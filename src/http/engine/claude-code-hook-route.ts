import { Effect, Result, Schema, SchemaIssue } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { hookOutput, hookSignal } from "../../domain/claude-code-hook.ts"
import { Forbidden } from "../../domain/errors.ts"
import { isFleetCredential } from "../../domain/fleet.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { Authenticator, authorizeEngine } from "../auth.ts"
import { bearerCredential } from "../bearer.ts"
import { describeSchemaError } from "../envelope.ts"
import { authorizeFleet, makeFleetIdentities } from "./fleet-identity.ts"
import { ClaudeCodeHookInput, ClaudeCodeHookQuery } from "./hooks-api.ts"
import { BatchSignalInput } from "./signals-api.ts"
import { SignalLimits } from "./signal-limits.ts"
import { makeIngestOne } from "./signals-handlers.ts"

/** Claude Code's HTTP hook posts here (managed settings, no adapter on the machine). */
export const claudeCodeHookRoute = { method: "POST", path: "/engine/v1/hooks/claude-code" } as const

const decodePayload = Schema.decodeUnknownResult(BatchSignalInput)
const decodeInput = Schema.decodeUnknownResult(ClaudeCodeHookInput)
const decodeQuery = Schema.decodeUnknownResult(Schema.Struct(ClaudeCodeHookQuery))

const refused = (cause: Schema.SchemaError, kind: "Payload" | "Query" = "Payload") =>
  Effect.fail(describeSchemaError(new HttpApiError.HttpApiSchemaError({ kind, cause })))

const mediaType = (contentType: string): string => contentType.toLowerCase().split(";")[0]!.trim()

export interface HookOptions {
  readonly model: string | undefined
  readonly sendPrompts: boolean
  readonly failClosed: boolean
}

/**
 * One hook input of an authenticated caller, answered in Claude Code's hook protocol: its signal
 * judged on the same path as POST /engine/v1/signals (limits, record, ingress: makeIngestOne).
 */
export const makeAnswerHook = Effect.gen(function*() {
  const ingestOne = yield* makeIngestOne
  return (principal: LicensePrincipal, input: unknown, options: HookOptions) =>
    Effect.gen(function*() {
      const signal = hookSignal(input, options)
      // An event that makes no signal (a notification, say): nothing to judge, go on.
      if (signal === undefined) return {}
      const payload = decodePayload({ type: signal.type, adapter: "claude-code", session_id: signal.session_id, metadata: signal.metadata })
      if (Result.isFailure(payload)) return yield* refused(payload.failure)
      // No idempotency key is given, so the two that could disagree (Conflict) never exist.
      const answer = yield* ingestOne(principal, undefined, payload.success).pipe(Effect.catchTag("Conflict", Effect.die))
      return hookOutput(signal.event, answer, options.failClosed)
    })
})

/**
 * POST /engine/v1/hooks/claude-code, served directly as POST /engine/v1/signals is
 * (ingest-route.ts; the HttpApi endpoint in hooks-api.ts documents it and serves the path's other
 * spellings). A refused key or a bad body is the API's error envelope with its status: Claude
 * Code counts any non-2xx as the hook failing, and its `onFailure` then decides.
 */
export const makeClaudeCodeHookRoute = Effect.gen(function*() {
  const authenticator = yield* Authenticator
  const answerHook = yield* makeAnswerHook
  const limits = yield* SignalLimits
  const identities = yield* makeFleetIdentities
  /**
   * A user's license key, or the org's fleet credential with the developer's e-mail in
   * X-Signal-Engine-User (Claude Code's hook input names no user; the managed file fills the
   * header from an environment variable device management sets).
   */
  const hookPrincipal = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest) {
    const credential = bearerCredential(request.headers.authorization)
    if (!isFleetCredential(credential)) return yield* authorizeEngine(authenticator, credential, "signals")
    const fleet = yield* authorizeFleet(authenticator, credential)
    const claim = yield* identities.resolve(fleet, request.headers["x-signal-engine-user"], 1)
    if (claim._tag === "Refused") return yield* Forbidden.of(`X-Signal-Engine-User: ${claim.reason}`, "unknown_identity")
    return claim.principal
  })
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const principal = yield* hookPrincipal(request)
    yield* limits.admit(principal)
    // Checked as the HttpApi endpoint checks them (the document's contract): query, type, body.
    const query = decodeQuery(Object.fromEntries(new URL(request.url, "http://internal").searchParams))
    if (Result.isFailure(query)) return yield* refused(query.failure, "Query")
    const contentType = mediaType(request.headers["content-type"] ?? "application/json")
    if (contentType !== "application/json") return HttpServerResponse.text(`Unsupported content-type: ${contentType}`, { status: 415 })
    const text = yield* Effect.orDie(request.text)
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      return yield* refused(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))
    }
    const input = decodeInput(body)
    if (Result.isFailure(input)) return yield* refused(input.failure)
    const model = request.headers["x-signal-engine-model"]
    const output = yield* answerHook(principal, input.success, {
      model: model === "" ? undefined : model,
      sendPrompts: query.success.send_prompts === "true",
      failClosed: query.success.fail_mode === "closed"
    })
    return HttpServerResponse.jsonUnsafe(output)
  })
})
