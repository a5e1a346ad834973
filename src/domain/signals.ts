import { Schema } from "effect"

/**
 * The signal types adapters may send: the spec's (§2.5) and `pre-tool` (an additive v1 extension:
 * sent before a tool runs, so a block verdict can stop the call; judged like any signal, never
 * counted as usage).
 */
export const SignalType = Schema.Literals([
  "user-prompt",
  "pre-tool",
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
 * Whether a signal's tokens and cost count as usage (sessions, events, budgets, limits, reports,
 * the token-spike baseline). A `pre-tool` signal asks before anything ran: nothing to count.
 */
export const countsAsUsage = (type: SignalType): boolean => type !== "pre-tool"

/**
 * Arbitrary JSON object; known keys: model, tokens_in, tokens_out, cache_read_tokens,
 * cache_write_tokens, cost_usd, latency_ms, error_code, project_id, prompt, tool_name, command,
 * mcp_server, findings, paths, scan_truncated.
 */
export const Metadata = Schema.Record(Schema.String, Schema.Unknown)
export type Metadata = typeof Metadata.Type
