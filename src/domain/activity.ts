import { Schema } from "effect"
import { Timestamp } from "./tenancy.ts"
import { NotFoundRefusal, Refusal } from "./refusal.ts"

/**
 * Sessions and events as the two APIs show them (spec §2.2, §2.3, §2.5, §2.6). They are read
 * models of the `sessions` and `events` projections the engine writes; nothing here writes them.
 * Timestamps are ISO 8601 strings in UTC with milliseconds.
 */

const NullableTimestamp = Schema.NullOr(Timestamp)

/** A stored signal as it appears inside a session (spec §2.5). */
export const StoredSignal = Schema.Struct({
  id: Schema.String.annotate({ description: "signal id, prefix sig_" }),
  type: Schema.String.annotate({ description: "signal type" }),
  timestamp: Timestamp.annotate({ description: "when the signal was accepted (ISO 8601 UTC)" }),
  metadata: Schema.Record(Schema.String, Schema.Unknown).annotate({ description: "the signal's metadata as sent" })
}).annotate({ identifier: "StoredSignal" })
export type StoredSignal = typeof StoredSignal.Type

export const SessionStatus = Schema.Literals(["active", "ended"])
export type SessionStatus = typeof SessionStatus.Type

export const EndReason = Schema.Literals(["session-end", "timeout"])
export type EndReason = typeof EndReason.Type

/** A session on the management API (spec §2.2, plus client_session_id, status and end_reason). */
export const Session = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix sess_" }),
  user_id: Schema.String,
  project_id: Schema.NullOr(Schema.String).annotate({ description: "the first project_id seen in the session; null when none" }),
  adapter: Schema.String.annotate({ description: "adapter name" }),
  client_session_id: Schema.String.annotate({ description: "the adapter's own session_id" }),
  status: SessionStatus.annotate({ description: "`active` while the session is open, `ended` once it is closed" }),
  started_at: Timestamp,
  ended_at: NullableTimestamp.annotate({ description: "null while the session is open" }),
  end_reason: Schema.NullOr(EndReason).annotate({
    description: "`session-end` (closed by the adapter) or `timeout` (inactivity); null while open"
  }),
  duration_s: Schema.Finite.annotate({
    description: "seconds from started_at to ended_at, or to the last activity while the session is open"
  }),
  model: Schema.NullOr(Schema.String).annotate({ description: "primary (most used) model; null when no model was seen" }),
  models: Schema.Array(Schema.String).annotate({ description: "all models used, in first-seen order" }),
  tokens_in: Schema.Int,
  tokens_out: Schema.Int,
  cost_usd: Schema.Finite.annotate({ description: "USD" }),
  signal_count: Schema.Int,
  error_count: Schema.Int
}).annotate({ identifier: "Session" })
export type Session = typeof Session.Type

/** GET /sessions/:id: the session with every signal of it, oldest first. */
export const SessionDetail = Schema.Struct({
  ...Session.fields,
  signals: Schema.Array(StoredSignal).annotate({ description: "all signals of the session in time order (oldest first)" })
}).annotate({ identifier: "SessionDetail" })
export type SessionDetail = typeof SessionDetail.Type

/** One accepted signal on the management API (spec §2.3, plus signal_id and type). */
/** A rule's decision on a signal, as its event keeps it. */
export const EventVerdict = Schema.Struct({
  ok: Schema.Boolean.annotate({ description: "false when the signal was blocked" }),
  action: Schema.optionalKey(Schema.Literals(["block", "warn", "log", "notify", "redact"])),
  rule_id: Schema.optionalKey(Schema.String),
  message: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "EventVerdict" })

/** A secret or sensitive datum an adapter found in a signal's content: never the datum itself. */
export const Finding = Schema.Struct({
  kind: Schema.String.annotate({ description: "aws_access_token, github_pat, private_key, generic_api_key, …" }),
  where: Schema.String.annotate({ description: "where in the hook's input: prompt, tool_input.command, tool_response.stdout, …" }),
  fingerprint: Schema.String.annotate({ description: "a keyed hash of the secret: the same secret, the same fingerprint" })
}).annotate({ identifier: "Finding" })
export type Finding = typeof Finding.Type

export const Event = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix evt_" }),
  signal_id: Schema.String.annotate({ description: "the signal this event records, prefix sig_" }),
  type: Schema.String.annotate({ description: "signal type" }),
  session_id: Schema.String,
  user_id: Schema.String,
  project_id: Schema.NullOr(Schema.String),
  ts: Timestamp.annotate({ description: "ISO 8601 UTC, millisecond precision" }),
  adapter: Schema.String,
  model: Schema.NullOr(Schema.String).annotate({ description: "model identifier; null for signals without a model" }),
  tokens_in: Schema.Int,
  tokens_out: Schema.Int,
  latency_ms: Schema.NullOr(Schema.Finite).annotate({ description: "null when the adapter did not report it" }),
  cost_usd: Schema.Finite.annotate({ description: "USD" }),
  error_code: Schema.NullOr(Schema.String).annotate({ description: "non-null when the model call returned an error" }),
  verdict: Schema.NullOr(EventVerdict).annotate({
    description:
      "what a rule decided on the signal; null when no rule decided (allowed) or the signal was sent without an idempotency key (the adapters always send one)"
  }),
  findings: Schema.optionalKey(
    Schema.Array(Finding).annotate({
      description: "extension: the secrets and sensitive data the adapter found in the signal's prompt, tool input or tool output " +
        "(metadata.findings); absent when none"
    })
  )
}).annotate({ identifier: "Event" })
export type Event = typeof Event.Type

/** A session on the engine API (spec §2.6). */
export const EngineSession = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix sess_" }),
  adapter: Schema.String,
  started_at: Timestamp,
  ended_at: NullableTimestamp.annotate({ description: "null while the session is open" }),
  signals: Schema.Int.annotate({ description: "signal count" }),
  tokens_in: Schema.Int,
  tokens_out: Schema.Int,
  cost_usd: Schema.Finite.annotate({ description: "USD" })
}).annotate({ identifier: "EngineSession" })
export type EngineSession = typeof EngineSession.Type

export const toEngineSession = (s: Session): EngineSession => ({
  id: s.id,
  adapter: s.adapter,
  started_at: s.started_at,
  ended_at: s.ended_at,
  signals: s.signal_count,
  tokens_in: s.tokens_in,
  tokens_out: s.tokens_out,
  cost_usd: s.cost_usd
})

/** Sort direction of a list: by time, then id. */
export type Order = "asc" | "desc"

/** What a usage report groups by: who, which model, which project, which adapter, or which day. */
export const UsageGroupBy = Schema.Literals(["user", "model", "project", "adapter", "day"])
export type UsageGroupBy = typeof UsageGroupBy.Type

const usageFigures = {
  signals: Schema.Int.annotate({ description: "signals accepted (every one counts, blocked or not)" }),
  sessions: Schema.Int.annotate({ description: "sessions with activity in the group" }),
  tokens_in: Schema.Int,
  tokens_out: Schema.Int,
  cost_usd: Schema.Finite.annotate({ description: "USD, to the nano-dollar" }),
  error_count: Schema.Int.annotate({ description: "signals whose model call returned an error" }),
  secret_findings: Schema.Int.annotate({
    description: "Extension: secrets the adapters found (each finding of each signal's metadata.findings; never the secret)"
  })
}

export const UsageTotals = Schema.Struct(usageFigures)
export type UsageTotals = typeof UsageTotals.Type

export const UsageGroup = Schema.Struct({
  key: Schema.NullOr(Schema.String).annotate({
    description: "the user id, model, project id, adapter, or day (YYYY-MM-DD in the org's time zone); " +
      "null for the signals without a model or project"
  }),
  ...usageFigures
})
export type UsageGroup = typeof UsageGroup.Type

export interface UsageReport {
  readonly group_by: UsageGroupBy
  readonly from: string
  readonly to: string
  readonly time_zone: string
  readonly totals: UsageTotals
  readonly data: ReadonlyArray<UsageGroup>
  readonly cursor: string
  readonly has_more: boolean
}

export class SessionNotFound extends NotFoundRefusal("SessionNotFound", "session") {}

export class EventNotFound extends NotFoundRefusal("EventNotFound", "event") {}

/** A cursor this endpoint did not return. */
export class UnknownCursor extends Refusal("UnknownCursor", 400, "invalid_parameters") {
  constructor() {
    super("the cursor is not one this endpoint returned")
  }
}

/** An `order` that contradicts the listing its cursor continues. */
export class CursorOrderMismatch extends Refusal("CursorOrderMismatch", 400, "invalid_parameters") {
  constructor(order: Order) {
    super(`the cursor continues a listing in ${order} order; pass order=${order} or start again without a cursor`)
  }
}
