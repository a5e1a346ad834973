import { Schema } from "effect"

/** The signal types adapters may send (spec §2.5). */
export const SignalType = Schema.Literals([
  "user-prompt",
  "post-tool",
  "pre-compact",
  "session-start",
  "session-end",
  "stop",
  "hesitation",
  "deletion",
  "correction",
  "session-pause",
  "goal-drift",
  "context-switch",
  "tool-switch",
  "token-milestone",
  "refocus-ack",
  "completion-verified",
  "adapter-heartbeat"
])
export type SignalType = typeof SignalType.Type

/**
 * Arbitrary JSON object; known keys: model, tokens_in, tokens_out, cache_read_tokens,
 * cache_write_tokens, cost_usd, latency_ms, error_code, project_id, prompt.
 */
export const Metadata = Schema.Record(Schema.String, Schema.Unknown)
export type Metadata = typeof Metadata.Type
