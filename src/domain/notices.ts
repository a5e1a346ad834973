import { createHash } from "node:crypto"
import { Schema } from "effect"
import type { Environment } from "./environments.ts"

/**
 * The fold's notices: what happened that the outbox delivers (to webhooks and notification
 * channels), and the event each becomes, with its id and the envelope receivers get.
 */

/**
 * The webhook event types of spec §6.1, and `audit.recorded`: an audit log entry, raised by the
 * change it records (src/store/audit-repo.ts), not by the fold.
 */
export const WebhookEventType = Schema.Literals([
  "session.started",
  "session.ended",
  "budget.exceeded",
  "budget.warning",
  "rule.triggered",
  "anomaly.detected",
  "audit.recorded"
])
export type WebhookEventType = typeof WebhookEventType.Type
export const webhookEventTypes: ReadonlyArray<WebhookEventType> = WebhookEventType.literals

export const isWebhookEventType = (s: string): s is WebhookEventType => (webhookEventTypes as ReadonlyArray<string>).includes(s)

/**
 * Something that happened and may be delivered to webhooks. `cause` names it uniquely within its
 * type (a session id, `<rule>:<window>`…): the event id is derived from it, so the same cause
 * folded twice is the same event. A new source emits `notice(type, cause, …)` and nothing else.
 */
export interface Notice {
  readonly type: WebhookEventType
  readonly cause: string
  readonly org_id: string
  readonly environment: Environment
  readonly ts: string
  readonly data: Readonly<Record<string, unknown>>
}

export const notice = (
  type: WebhookEventType,
  cause: string,
  at: { readonly org_id: string; readonly environment: Environment; readonly ts: string },
  data: Readonly<Record<string, unknown>>
): Notice => ({ type, cause, org_id: at.org_id, environment: at.environment, ts: at.ts, data })

/** `wev_` + the first 32 hex of sha256(`<type>:<cause>`). */
export const webhookEventId = (type: string, cause: string): string => `wev_${createHash("sha256").update(`${type}:${cause}`).digest("hex").slice(0, 32)}`

/** An outbox row: the notice with its id and the exact envelope receivers get. */
export interface OutboxEvent {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly type: WebhookEventType
  readonly payload: {
    readonly id: string
    readonly type: WebhookEventType
    readonly org_id: string
    readonly ts: string
    readonly data: Readonly<Record<string, unknown>>
  }
}

export const toOutboxEvent = (n: Notice): OutboxEvent => {
  const id = webhookEventId(n.type, n.cause)
  return {
    id,
    org_id: n.org_id,
    environment: n.environment,
    type: n.type,
    payload: { id, type: n.type, org_id: n.org_id, ts: n.ts, data: n.data }
  }
}
