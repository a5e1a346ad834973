import { Schema } from "effect"
import { WebhookEventType, webhookEventTypes } from "./notices.ts"
import { AuditEntry } from "./audit.ts"
import { Timestamp } from "./tenancy.ts"
import { NotFoundRefusal, Refusal } from "./refusal.ts"

/** Spec §8: a webhook secret has at least 32 characters. */
export const minSecretLength = 32

/** A webhook as the management API shows it; the secret is never returned. */
export const Webhook = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix wh_" }),
  url: Schema.String,
  events: Schema.Array(WebhookEventType),
  enabled: Schema.Boolean,
  failing: Schema.Boolean.annotate({
    description: "true after 5 failed attempts of a delivery: deliveries are paused (events still queue) until POST /webhooks/:id/enable"
  }),
  created_at: Timestamp
})
export type Webhook = typeof Webhook.Type

/** The answer of POST /webhooks/:id/test. */
export const TestOutcome = Schema.Struct({
  delivered: Schema.Boolean.annotate({ description: "the receiver answered 2xx within the timeout" }),
  status_code: Schema.NullOr(Schema.Int).annotate({ description: "the receiver's HTTP status; null when none came" }),
  latency_ms: Schema.Number,
  error: Schema.NullOr(Schema.String).annotate({ description: "why it was not delivered (timeout, connection error, URL refused, non-2xx)" })
})
export type TestOutcome = typeof TestOutcome.Type

/** One try at delivering an event to a webhook. */
export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int.annotate({ description: "1 to 5" }),
  attempted_at: Timestamp,
  finished_at: Timestamp,
  status_code: Schema.NullOr(Schema.Int).annotate({ description: "the receiver's HTTP status; null when none came" }),
  error: Schema.NullOr(Schema.String).annotate({ description: "why it failed; null when delivered" }),
  next_attempt_at: Schema.NullOr(Timestamp).annotate({ description: "when it is tried again; null when not" })
}).annotate({ identifier: "DeliveryAttempt" })

/** An event's delivery to one webhook (GET /webhooks/:id/deliveries), with its attempts. */
export const WebhookDelivery = Schema.Struct({
  event_id: Schema.String.annotate({ description: "the envelope's id, prefix wev_" }),
  type: WebhookEventType,
  status: Schema.Literals(["pending", "delivered", "failed"]).annotate({
    description: "`pending` while attempts remain (or paused while the webhook is failing), `failed` after the last"
  }),
  created_at: Timestamp,
  delivered_at: Schema.NullOr(Timestamp),
  next_attempt_at: Schema.NullOr(Timestamp).annotate({ description: "for a pending delivery, when it is tried next" }),
  attempts: Schema.Array(DeliveryAttempt).annotate({ description: "oldest first" })
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

/** An event as a webhook delivery carries it, listed by GET /webhook-events whatever the subscriptions. */
export const RaisedEvent = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix wev_" }),
  type: WebhookEventType,
  org_id: Schema.String,
  ts: Timestamp,
  data: Schema.Record(Schema.String, Schema.Unknown).annotate({
    description: "as in the webhook payloads (schemas/webhook-payloads.schema.json)"
  })
}).annotate({ identifier: "RaisedEvent" })
export type RaisedEvent = typeof RaisedEvent.Type

/** An admin alert (GET /alerts). */
export const Alert = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix alert_" }),
  type: Schema.String.annotate({ description: "webhook.failing or channel.failing" }),
  message: Schema.String,
  data: Schema.Record(Schema.String, Schema.Unknown),
  created_at: Timestamp
})
export type Alert = typeof Alert.Type

// ---------------------------------------------------------------------------------------------
// Payloads (spec §6.2). The data shapes of session.*, and budget.warning are ours (not shown).

const SessionStartedData = Schema.Struct({
  session_id: Schema.String,
  user_id: Schema.String,
  adapter: Schema.String,
  client_session_id: Schema.String.annotate({ description: "the adapter's own session id" }),
  project_id: Schema.NullOr(Schema.String),
  started_at: Timestamp
}).annotate({ identifier: "SessionStartedData" })

const SessionEndedData = Schema.Struct({
  ...SessionStartedData.fields,
  ended_at: Timestamp,
  end_reason: Schema.Literals(["session-end", "timeout"]),
  duration_s: Schema.Number,
  signal_count: Schema.Int,
  error_count: Schema.Int,
  model: Schema.NullOr(Schema.String).annotate({ description: "primary model" }),
  models: Schema.Array(Schema.String),
  tokens_in: Schema.Int,
  tokens_out: Schema.Int,
  cost_usd: Schema.Number
}).annotate({ identifier: "SessionEndedData" })

const BudgetData = Schema.Struct({
  rule_id: Schema.String,
  rule_name: Schema.String,
  scope: Schema.String,
  scope_id: Schema.String,
  threshold: Schema.Number,
  current: Schema.Number,
  window: Schema.String,
  metric: Schema.String
})

const RuleTriggeredData = Schema.Struct({
  rule_id: Schema.String,
  rule_name: Schema.String,
  action: Schema.String,
  user_id: Schema.String,
  model: Schema.NullOr(Schema.String).annotate({ description: "the signal's model; null when it named none, as on its event" }),
  session_id: Schema.String,
  event_id: Schema.String
}).annotate({ identifier: "RuleTriggeredData" })

const AnomalyDetectedData = Schema.Struct({
  anomaly_type: Schema.String.annotate({ description: "e.g. token_spike" }),
  user_id: Schema.String,
  baseline_avg: Schema.Number,
  observed: Schema.Number,
  deviation_pct: Schema.Number,
  session_id: Schema.String
}).annotate({ identifier: "AnomalyDetectedData" })

const envelopeOf = <T extends WebhookEventType, D extends Schema.Top>(type: T, data: D, description: string) =>
  Schema.Struct({
    id: Schema.String.annotate({ description: "prefix wev_; the same event always has the same id (deduplicate on it)" }),
    type: Schema.Literal(type),
    org_id: Schema.String,
    ts: Timestamp.annotate({ description: "when the event happened" }),
    data
  }).annotate({ description })

/** Every webhook delivery body (HTTP POST, JSON), by type. */
export const WebhookPayload = Schema.Union([
  envelopeOf("session.started", SessionStartedData, "a new session began; ts = started_at"),
  envelopeOf("session.ended", SessionEndedData, "a session ended (explicit close or timeout); ts = ended_at"),
  envelopeOf(
    "budget.exceeded",
    BudgetData.annotate({ identifier: "BudgetExceededData" }),
    "a budget rule's threshold was reached (once per rule, scope and window)"
  ),
  envelopeOf(
    "budget.warning",
    BudgetData.annotate({ identifier: "BudgetWarningData" }),
    "a budget reached 80% of its threshold (once per rule, scope and window)"
  ),
  envelopeOf("rule.triggered", RuleTriggeredData, "a rule fired (block, warn, log, notify or redact)"),
  envelopeOf("anomaly.detected", AnomalyDetectedData, "unusual activity was detected: token_spike, a signal's tokens above SPIKE_FACTOR × the user's baseline"),
  envelopeOf("audit.recorded", AuditEntry, "a change was made through the management API: the audit log's entry (GET /audit-log)")
]).annotate({ identifier: "WebhookPayload" })
export type WebhookPayload = typeof WebhookPayload.Type

export class WebhookNotFound extends NotFoundRefusal("WebhookNotFound", "webhook") {}

export class UnknownWebhookEvent extends Refusal("UnknownWebhookEvent", 422, "unknown_event") {
  constructor(names: ReadonlyArray<string>) {
    super(`unknown event name(s): ${names.join(", ")}; expected some of ${webhookEventTypes.join(", ")}`)
  }
}

export class NoWebhookEvents extends Refusal("NoWebhookEvents", 422, "validation_error") {
  constructor() {
    super("events must name at least one event")
  }
}

export class SecretTooShort extends Refusal("SecretTooShort", 422, "secret_too_short") {
  constructor() {
    super(`secret must have at least ${minSecretLength} characters`)
  }
}

/** A URL the SSRF policy refuses (src/webhooks/url-policy.ts), for a webhook or a chat channel (`field`). */
export class UrlRefused extends Refusal("UrlRefused", 422, "url_not_allowed") {
  constructor(reason: string, field?: string) {
    super(field === undefined ? reason : `${field}: ${reason}`)
  }
}
