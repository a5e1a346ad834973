import type { Environment } from "./environments.ts"
import type { OutboxEvent } from "./notices.ts"
import type { Rule } from "./rules.ts"

/**
 * Who the outbox's events go to, decided when their batch is folded from the tenant's targets as
 * the node holds them (the rule cache). The store writes a delivery or a message per recipient,
 * for the events that are new, to targets that are still there and enabled.
 */

/** What a tenant (org and environment) has that its events can go to. */
export interface TenantTargets {
  /** Its enabled webhooks, failing ones too (their deliveries wait), with the event types each subscribed to. */
  readonly webhooks: ReadonlyArray<{ readonly id: string; readonly events: ReadonlyArray<string> }>
  /** Its enabled notification channels. */
  readonly channels: ReadonlySet<string>
  /** The org's alert channels among them. */
  readonly alertChannels: ReadonlyArray<string>
}

export const noTargets: TenantTargets = { webhooks: [], channels: new Set(), alertChannels: [] }

/** Where a tenant's targets, and the rules that name channels, are looked up (the engine's rule cache). */
export interface TargetDirectory {
  readonly targetsOf: (orgId: string, environment: Environment) => TenantTargets
  readonly rulesFor: (orgId: string, environment: Environment) => ReadonlyArray<Pick<Rule, "id" | "action_config">>
}

export interface WebhookRecipient {
  readonly event_id: string
  readonly webhook_id: string
}

export interface ChannelRecipient {
  readonly event_id: string
  readonly channel_id: string
  /** What coalescing groups firings by, within the channel's window. */
  readonly topic: string
}

export interface Recipients {
  readonly webhooks: ReadonlyArray<WebhookRecipient>
  readonly channels: ReadonlyArray<ChannelRecipient>
}

export const noRecipients: Recipients = { webhooks: [], channels: [] }

const field = (event: OutboxEvent, name: string): string => String(event.payload.data[name])

/** A `notify` rule's firing: a notification, not only an event (a `log` rule's is only an event, spec §6.5). */
const isNotification = (event: OutboxEvent) => event.type === "rule.triggered" && event.payload.data.action === "notify"

/** The webhooks an event goes to: those subscribed to its type; a notification, every one. */
export const webhooksFor = (event: OutboxEvent, targets: TenantTargets): ReadonlyArray<string> =>
  (isNotification(event) ? targets.webhooks : targets.webhooks.filter((w) => w.events.includes(event.type))).map((w) => w.id)

/**
 * The channels an event goes to: a notification to the enabled channels its rule names in
 * `action_config.channels`; budget warnings, budget exceeded and anomalies to the org's alert
 * channels; other events to none.
 */
export const channelsFor = (
  event: OutboxEvent,
  targets: TenantTargets,
  rules: ReadonlyArray<Pick<Rule, "id" | "action_config">>
): ReadonlyArray<string> => {
  if (isNotification(event)) {
    const named = rules.find((r) => r.id === field(event, "rule_id"))?.action_config.channels
    if (!Array.isArray(named)) return []
    return [...new Set(named)].filter((id): id is string => typeof id === "string" && targets.channels.has(id))
  }
  return event.type === "budget.warning" || event.type === "budget.exceeded" || event.type === "anomaly.detected"
    ? targets.alertChannels
    : []
}

/**
 * What a channel coalesces an event with: a rule's firings for one user, an anomaly type's for one
 * user; a budget event is a topic of its own (it happens once per rule, scope and window already).
 */
export const topicOf = (event: OutboxEvent): string =>
  event.type === "rule.triggered"
    ? `rule:${field(event, "rule_id")}:${field(event, "user_id")}`
    : event.type === "anomaly.detected"
    ? `anomaly:${field(event, "anomaly_type")}:${field(event, "user_id")}`
    : event.id

/** Every recipient of the events, each event's once. */
export const recipientsOf = (events: ReadonlyArray<OutboxEvent>, directory: TargetDirectory): Recipients => {
  if (events.length === 0) return noRecipients
  const webhooks: Array<WebhookRecipient> = []
  const channels: Array<ChannelRecipient> = []
  const seen = new Set<string>()
  for (const event of events) {
    if (seen.has(event.id)) continue
    seen.add(event.id)
    const targets = directory.targetsOf(event.org_id, event.environment)
    for (const id of webhooksFor(event, targets)) webhooks.push({ event_id: event.id, webhook_id: id })
    const to = channelsFor(event, targets, directory.rulesFor(event.org_id, event.environment))
    if (to.length > 0) {
      const topic = topicOf(event)
      for (const id of to) channels.push({ event_id: event.id, channel_id: id, topic })
    }
  }
  return { webhooks, channels }
}
