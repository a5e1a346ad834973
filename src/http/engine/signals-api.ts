import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Conflict, ServiceUnavailable, TooManyRequests } from "../../domain/errors.ts"
import { maxFindingsJudged, maxPathsJudged } from "../../domain/content-policy.ts"
import { SignalType } from "../../domain/signals.ts"
import { documentedEnum, matching, storableJson } from "../../domain/text.ts"
import { EngineAuth, Envelope, RequiredFeature } from "../contract.ts"

const bounded = (max: number) => Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(max)))
/**
 * Upper bounds of one signal's numbers. Far above anything real, they keep every sum the fold
 * keeps (sessions, budget counters, in bigint and double columns) finite and in range: without
 * them one signal with cost 1e300 or tokens near 2^53 was accepted and then failed every write
 * of its partition.
 */
export const maxTokens = 1_000_000_000
export const maxCostUsd = 1_000_000
/** A week: no model call or tool run an adapter reports takes longer. */
export const maxLatencyMs = 604_800_000
const count = Schema.Int.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(maxTokens)))
const amount = Schema.Finite.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))

/** Known metadata keys are type-checked; any other key is kept as sent. */
export const SignalMetadata = Schema.StructWithRest(
  Schema.Struct({
    model: Schema.optionalKey(bounded(200)),
    tokens_in: Schema.optionalKey(count),
    tokens_out: Schema.optionalKey(count),
    cache_read_tokens: Schema.optionalKey(count.annotate({ description: "the part of tokens_in read from the prompt cache" })),
    cache_write_tokens: Schema.optionalKey(count.annotate({ description: "the part of tokens_in written to the prompt cache" })),
    cost_usd: Schema.optionalKey(amount.pipe(Schema.check(Schema.isLessThanOrEqualTo(maxCostUsd)))),
    latency_ms: Schema.optionalKey(amount.pipe(Schema.check(Schema.isLessThanOrEqualTo(maxLatencyMs)))),
    error_code: Schema.optionalKey(bounded(100)),
    project_id: Schema.optionalKey(bounded(200)),
    prompt: Schema.optionalKey(Schema.String),
    tool_name: Schema.optionalKey(bounded(200).annotate({ description: "the tool a pre-tool or post-tool signal is about (org_policy blocked_tools)" })),
    command: Schema.optionalKey(Schema.String.annotate({ description: "the shell command the tool is about to run (org_policy blocked_commands)" })),
    mcp_server: Schema.optionalKey(bounded(200).annotate({ description: "the MCP server the tool belongs to (org_policy blocked_mcp_servers)" })),
    findings: Schema.optionalKey(
      // Open, like the metadata it is in: a later adapter may say more of a finding (kept as sent, not judged).
      Schema.Array(Schema.StructWithRest(
        Schema.Struct({
          kind: bounded(100).annotate({ description: "what was found: aws_access_token, github_pat, private_key, generic_api_key, …" }),
          where: bounded(200).annotate({ description: "where in the hook's input: prompt, tool_input.command, tool_response.stdout, …" }),
          fingerprint: bounded(64).annotate({ description: "a keyed hash (HMAC) of the secret: the same secret, the same fingerprint; never the secret" })
        }),
        [Schema.Record(Schema.String, Schema.Unknown)]
      )).pipe(Schema.check(Schema.isMaxLength(maxFindingsJudged))).annotate({
        description: "secrets and sensitive data the adapter found in a prompt, a tool's input or its output (org_policy secret_kinds); " +
          "the adapter takes each one out of everything it sends"
      })
    ),
    paths: Schema.optionalKey(
      Schema.Array(bounded(1000)).pipe(Schema.check(Schema.isMaxLength(maxPathsJudged))).annotate({
        description: "the files a tool call names, absolute, the user's home as ~ (org_policy protected_paths)"
      })
    ),
    scan_truncated: Schema.optionalKey(Schema.Boolean.annotate({ description: "true when the input was larger than the adapter scans (1 MiB)" }))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

const signalFields = {
  // Checked by the handler, which answers the spec's 400 invalid_signal_type; listed here so
  // that the document names the values.
  type: Schema.String.pipe(Schema.check(documentedEnum(SignalType.literals))).annotate({
    description: `one of: ${SignalType.literals.join(", ")}; anything else is 400 invalid_signal_type. ` +
      "pre-tool (extension) is sent before a tool runs so that a block can stop it: judged by the rules like any signal " +
      "(metadata.tool_name, command, mcp_server for org_policy lists; model for model filters), listed in its session, " +
      "never counted as usage (its tokens and cost count nowhere). " +
      "Goal drift: user-prompt and context-switch signals (metadata.prompt, sent by adapters only with --send-prompts) are " +
      "judged against the active goals and the session's context (the files, searches and commands of pre-tool and post-tool " +
      "signals); after consecutive off-goal prompts in one session (each session keeps its own streak) the engine adds a " +
      "goal-drift signal to that session with metadata goal_id, " +
      "goal_description, since (the first off-goal prompt's time), off_goal_prompts, evidence ([{signal_id, prompt}]: the " +
      "off-goal prompts, their first 60 characters), prompt_signal_id, score, method and source \"engine\". A refocus-ack " +
      "answers it: its session's streak starts over (every session's when the refocus-ack's own session is not off-goal, " +
      "and when a goal is created or changed); with metadata.on_goal true (extension) the user says the drift was wrong, " +
      "and the words of its session's off-goal prompts and tool calls join the goal's context, with those of " +
      "metadata.prompts (strings: the drift's prompts as its answer gave them) even once the session is back on the goal"
  }),
  adapter: bounded(100).annotate({ description: "the adapter's name, e.g. claude-code" }),
  session_id: bounded(200).annotate({ description: "the adapter's own session id" }),
  metadata: Schema.optionalKey(SignalMetadata)
}

/** Every string of a signal (metadata keys and values included) is checked for storable text. */
export const SignalInput = Schema.Struct(signalFields).pipe(Schema.check(storableJson))

/**
 * An idempotency key: 1 to 255 visible ASCII characters (a UUID, say). The user's signals with
 * one key are one signal: a copy sent again (a retry after a timeout or a cut connection) is
 * answered as the first was and counted nowhere a second time.
 */
export const IdempotencyKey = Schema.String.pipe(
  Schema.check(Schema.isMinLength(1), Schema.isMaxLength(255), matching(/^[\x21-\x7e]+$/))
)

const keyDescription = "the key of this signal: a signal the user already sent with this key is not counted again, " +
  "and is answered as it was then, with `duplicate: true`"

/**
 * A signal with its idempotency key in the body: each signal of a batch, and POST /signals too
 * (where the Idempotency-Key header is the usual place; if both are sent they must agree).
 */
export const BatchSignalInput = Schema.StructWithRest(
  Schema.Struct({
    ...signalFields,
    idempotency_key: Schema.optionalKey(IdempotencyKey.annotate({ description: keyDescription }))
  }),
  // Fields this version does not know are taken and ignored: an adapter newer than the service
  // must not lose signals.
  [Schema.Record(Schema.String, Schema.Unknown)]
).pipe(Schema.check(storableJson))

export const IngestHeaders = Schema.Struct({
  "idempotency-key": Schema.optional(IdempotencyKey.annotate({ description: `Idempotency-Key: ${keyDescription}` }))
})

/** Named so it can be refused: one header cannot be the key of many signals. */
export const SignalAccepted = Schema.Struct({
  ok: Schema.Boolean.annotate({ description: "false exactly when a rule blocked the signal, or told the adapter to redact it" }),
  signal_id: Schema.String,
  session_id: Schema.optional(Schema.String.annotate({ description: "the session the signal was counted in" })),
  action: Schema.optional(
    Schema.Literals(["block", "warn", "log", "notify", "redact", "pending"]).annotate({
      description: "the action of the rule that decided (the first block, else the first redact, else the first rule that fired); " +
        "redact (extension): the adapter takes the secrets found out of the tool's input where the tool lets a hook rewrite it, and blocks elsewhere; " +
        "pending: the signal is durable but was not processed within the wait, no verdict yet"
    })
  ),
  rule_id: Schema.optional(Schema.String.annotate({ description: "the rule that decided" })),
  reason: Schema.optional(
    Schema.Literals(["no_owner", "forward_failed", "timeout", "database_unavailable"]).annotate({
      description: "with action pending only, why there is no verdict yet: no_owner (no node owns the user's partition: " +
        "a restart or rebalance), forward_failed (the owning node could not be reached), timeout (the owner did not " +
        "answer within the wait), database_unavailable (PostgreSQL is out of reach: the signal is in the log, and is " +
        "judged by its user's state once the database is back; answered at once, not after the wait). Rules that need no per-user state (model_filter, org_policy) are judged when the " +
        "signal is accepted, so a pending signal is blocked by none of them; only budgets, per-user limits and " +
        "require_project_id on a signal naming no project are undecided. Apply the adapter's fail mode."
    })
  ),
  message: Schema.optional(Schema.String.annotate({
    description: "the deciding rule's action_config.message, when it has one: always for block (show it when aborting), " +
      "for warn, log and notify when the rule was given one (show it to the user); absent otherwise. " +
      "With action pending: what the reason means, in words"
  })),
  duplicate: Schema.optional(
    Schema.Literal(true).annotate({
      description: "the signal's idempotency key was used before: this answers what that signal got, and nothing was counted again"
    })
  ),
  drift: Schema.optional(
    Schema.Struct({
      goal_id: Schema.String,
      goal: Schema.String.annotate({ description: "the goal's description (its first 200 characters)" }),
      since: Schema.String.annotate({ description: "when the streak's first off-goal prompt came (ISO 8601)" }),
      off_goal_prompts: Schema.Number.annotate({ description: "the off-goal prompts in a row" }),
      prompts: Schema.Array(Schema.String).annotate({
        description: "those prompts, their first 60 characters: a refocus-ack answering the drift as the goal's work may name them " +
          "(metadata.prompts) so that their words join the goal's context however late the answer comes"
      })
    }).annotate({
      description: "extension: this prompt completed an off-goal streak, and the engine added a goal-drift signal to its " +
        "session (its metadata has the evidence): the adapter shows the person which goal, since when. Only on the " +
        "answer to that prompt, not on a retry of it (duplicate: true) nor with action pending"
    })
  )
})

/** Most signals one batch may carry. */
export const maxBatchSignals = 500

export const SignalsBatchInput = Schema.StructWithRest(
  Schema.Struct({
    signals: Schema.Array(Schema.Unknown.annotate({ description: "a signal, as POST /signals takes it" })).pipe(
      Schema.check(Schema.isMinLength(1), Schema.isMaxLength(maxBatchSignals))
    ).annotate({
      description: `1 to ${maxBatchSignals} signals of the authenticated user, appended in this order; ` +
        "each is validated on its own, so an invalid one does not reject the others; " +
        "each may carry its `idempotency_key` (as the Idempotency-Key header of POST /signals)"
    })
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
)

export const SignalRejected = Schema.Struct({
  ok: Schema.Literal(false),
  error: Schema.Struct({
    code: Schema.String.annotate({ description: "as POST /signals would answer it: invalid_signal_type, invalid_parameters, metadata_too_large" }),
    error: Schema.String
  })
}).annotate({ description: "the signal was not accepted (nothing was stored for it)" })

export const SignalsBatchAccepted = Schema.Struct({
  results: Schema.Array(Schema.Union([SignalAccepted, SignalRejected])).annotate({
    description: "one result per signal, in input order"
  })
})

export class SignalsGroup extends HttpApiGroup.make("signals")
  .add(
    HttpApiEndpoint.post("ingest", "/signals", {
      payload: BatchSignalInput,
      headers: IngestHeaders,
      success: SignalAccepted,
      error: [ServiceUnavailable, TooManyRequests, Conflict]
    })
      .annotate(RequiredFeature, "signals")
      .annotateMerge(OpenApi.annotations({
        description: "Accepts one signal. Once answered `ok`, the signal is durable and will appear in its session. " +
          "With an Idempotency-Key header (extension; or `idempotency_key` in the body, which must then agree with " +
          "the header), sending the same signal again is safe: the copy is answered as the first was (same " +
          "signal_id and verdict, `duplicate: true`) and counted nowhere. Rate-limited per license key and per org " +
          "(extension, by plan, in signals; X-RateLimit-* headers on every answer; 429 with Retry-After beyond them)."
      }))
  )
  .add(
    HttpApiEndpoint.post("ingestBatch", "/signals/batch", {
      payload: SignalsBatchInput,
      success: SignalsBatchAccepted,
      error: [ServiceUnavailable, TooManyRequests]
    })
      .annotate(RequiredFeature, "signals")
      .annotateMerge(OpenApi.annotations({
        description: "Extension: accepts up to 500 signals of one user in one request, appended to the log in order " +
          "(one append). Answers a result per signal in input order; invalid signals are refused individually. " +
          "Takes no Idempotency-Key header (400 if sent): each signal carries its own `idempotency_key`."
      }))
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
{}
