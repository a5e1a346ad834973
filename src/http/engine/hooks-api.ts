import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ServiceUnavailable, TooManyRequests } from "../../domain/errors.ts"
import { EngineAuth, Envelope, RequiredFeature } from "../contract.ts"

/** The hook input Claude Code posts: its own JSON, taken as it comes (fields it adds are ignored). */
export const ClaudeCodeHookInput = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "Claude Code's hook input JSON as its http hook posts it (hook_event_name, session_id, cwd, prompt, tool_name, " +
    "tool_input, …)"
})

export const ClaudeCodeHookHeaders = Schema.Struct({
  "x-signal-engine-model": Schema.optional(Schema.String.annotate({
    description: "the model the session uses when the hook input does not name it (Claude Code's hooks name it only on " +
      "SessionStart): managed settings interpolate $ANTHROPIC_MODEL into it"
  })),
  "x-signal-engine-user": Schema.optional(Schema.String.annotate({
    description: "with the org's fleet credential (Bearer flt_…) in place of a license key: the developer's e-mail, which " +
      "names the user (any letter case); managed settings interpolate $SIGNAL_ENGINE_USER into it. An identity that is no " +
      "user of the org is created or refused (403 unknown_identity, counted in GET /api/v1/fleet/unknown-identities) as " +
      "the org's unknown_identities says. Ignored with a license key"
  }))
})

export const ClaudeCodeHookQuery = {
  send_prompts: Schema.optional(
    Schema.Literals(["true", "false"]).annotate({
      description: "true: the prompt's text is kept in the signal (goal drift needs it); otherwise only its length"
    })
  ),
  fail_mode: Schema.optional(
    Schema.Literals(["open", "closed"]).annotate({
      description: "what a signal without a verdict in time (pending) answers: open (default) lets it go on with a " +
        "system message, closed blocks it. The service out of reach is the hook's onFailure"
    })
  )
}

/** Claude Code's hook JSON output: `{}` goes on. */
export const ClaudeCodeHookOutput = Schema.Struct({
  decision: Schema.optional(Schema.Literal("block").annotate({ description: "UserPromptSubmit, PostToolUse: a block rule fired" })),
  reason: Schema.optional(Schema.String.annotate({ description: "with decision block: the rule's message" })),
  hookSpecificOutput: Schema.optional(
    Schema.Struct({
      hookEventName: Schema.Literal("PreToolUse"),
      permissionDecision: Schema.Literal("deny"),
      permissionDecisionReason: Schema.String
    }).annotate({ description: "PreToolUse: the tool call is denied, the model gets the rule's message" })
  ),
  systemMessage: Schema.optional(Schema.String.annotate({
    description: "a warn rule's message, a block where nothing is left to stop, or no verdict in time under fail_mode open"
  }))
})

export class HooksGroup extends HttpApiGroup.make("hooks")
  .add(
    HttpApiEndpoint.post("claudeCode", "/hooks/claude-code", {
      payload: ClaudeCodeHookInput,
      headers: ClaudeCodeHookHeaders,
      query: ClaudeCodeHookQuery,
      success: ClaudeCodeHookOutput,
      error: [TooManyRequests, ServiceUnavailable]
    })
      .annotate(RequiredFeature, "signals")
      .annotateMerge(OpenApi.annotations({
        description: "Claude Code's http hook type posts its hook input here (managed settings, no adapter installed; README " +
          "\"Claude Code managed settings (hooks)\"). The input becomes a signal (UserPromptSubmit: user-prompt, PreToolUse: " +
          "pre-tool, PostToolUse and PostToolUseFailure: post-tool, PreCompact, Stop, SessionEnd; other events make none and " +
          "are answered {}), of adapter claude-code in the input's session_id, judged exactly as POST /signals judges it, and " +
          "the verdict is answered in Claude Code's hook protocol. The credential is the user's license key, or the org's fleet " +
          "credential with X-Signal-Engine-User naming the user (served at this exact path only). A refused key or body is the error envelope with its " +
          "status, which Claude Code treats as the hook failing (its onFailure decides)."
      }))
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
{}
