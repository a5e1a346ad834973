import { Effect, Result, Schema, SchemaIssue } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { hookOutput, hookSignal } from "../../domain/claude-code-hook.ts"
import { Authenticator, authorizeEngine } from "../auth.ts"
import { bearerCredential } from "../bearer.ts"
import { describeSchemaError } from "../envelope.ts"
import { BatchSignalInput } from "./signals-api.ts"
import { SignalLimits } from "./signal-limits.ts"
import { makeIngestOne } from "./signals-handlers.ts"

/** Claude Code's HTTP hook posts here (managed settings, no adapter on the machine). */
export const claudeCodeHookRoute = { method: "POST", path: "/engine/v1/hooks/claude-code" } as const

const decodePayload = Schema.decodeUnknownResult(BatchSignalInput)

const refused = (cause: Schema.SchemaError) => Effect.fail(describeSchemaError(new HttpApiError.HttpApiSchemaError({ kind: "Payload", cause })))

/**
 * POST /engine/v1/hooks/claude-code: the hook input JSON Claude Code posts becomes a signal,
 * judged on the same path as POST /engine/v1/signals (the same key check, limits, record and
 * ingress: makeIngestOne), and the verdict is answered in Claude Code's hook protocol. A refused
 * key or a bad body is the API's error envelope with its status: Claude Code counts any non-2xx
 * as the hook failing, and its `onFailure` then decides (continue, or block).
 * Options, as the URL's query: `send_prompts=true` (the prompt's text is kept; otherwise its
 * length), `fail_mode=closed` (no verdict in time blocks). The `X-Signal-Engine-Model` header
 * names the model when the hook input does not (Claude Code's -p hooks never do).
 */
export const makeClaudeCodeHookRoute = Effect.gen(function*() {
  const authenticator = yield* Authenticator
  const ingestOne = yield* makeIngestOne
  const limits = yield* SignalLimits
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const principal = yield* authorizeEngine(authenticator, bearerCredential(request.headers.authorization), "signals")
    yield* limits.admit(principal)
    const query = new URL(request.url, "http://internal").searchParams
    const text = yield* Effect.orDie(request.text)
    let input: unknown
    try {
      input = JSON.parse(text)
    } catch {
      return yield* refused(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" })))
    }
    const model = request.headers["x-signal-engine-model"]
    const signal = hookSignal(input, { model: model === "" ? undefined : model, sendPrompts: query.get("send_prompts") === "true" })
    // An event that makes no signal (a notification, say): nothing to judge, go on.
    if (signal === undefined) return HttpServerResponse.jsonUnsafe({})
    const payload = decodePayload({ type: signal.type, adapter: "claude-code", session_id: signal.session_id, metadata: signal.metadata })
    if (Result.isFailure(payload)) return yield* refused(payload.failure)
    const answer = yield* ingestOne(principal, undefined, payload.success)
    return HttpServerResponse.jsonUnsafe(hookOutput(signal.event, answer, query.get("fail_mode") === "closed"))
  })
})
