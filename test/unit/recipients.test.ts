import { describe, expect, it } from "vitest"
import type { Environment } from "../../src/domain/environments.ts"
import { notice, type OutboxEvent, toOutboxEvent, type WebhookEventType } from "../../src/domain/notices.ts"
import {
  channelsFor,
  noTargets,
  recipientsOf,
  type TargetDirectory,
  type TenantTargets,
  topicOf,
  webhooksFor
} from "../../src/domain/recipients.ts"

const at = { org_id: "org_1", environment: "live" as Environment, ts: "2026-11-22T10:00:00.000Z" }

const event = (type: WebhookEventType, cause: string, data: Record<string, unknown>, where = at): OutboxEvent => toOutboxEvent(notice(type, cause, where, data))

const firing = (ruleId: string, action: string, userId = "user_1") =>
  event("rule.triggered", `${ruleId}:sig_${userId}`, { rule_id: ruleId, action, user_id: userId })
const warning = event("budget.warning", "rule_b:d", { rule_id: "rule_b" })
const exceeded = event("budget.exceeded", "rule_b:d:100", { rule_id: "rule_b" })
const spike = event("anomaly.detected", "token_spike:sig_9", { anomaly_type: "token_spike", user_id: "user_1" })
const started = event("session.started", "sess_1", { session_id: "sess_1" })

const targets: TenantTargets = {
  webhooks: [
    { id: "wh_sessions", events: ["session.started", "session.ended"] },
    { id: "wh_rules", events: ["rule.triggered"] },
    { id: "wh_budgets", events: ["budget.warning", "budget.exceeded"] }
  ],
  channels: new Set(["ch_ops", "ch_alerts", "ch_dev"]),
  alertChannels: ["ch_alerts"]
}
const rules = [
  { id: "rule_n", action_config: { channels: ["ch_ops", "ch_dev", "ch_ops"] } },
  { id: "rule_off", action_config: { channels: ["ch_disabled", "ch_ops"] } },
  { id: "rule_none", action_config: {} },
  { id: "rule_odd", action_config: { channels: "ch_ops" } }
]

describe("webhooksFor", () => {
  it("sends an event to the webhooks subscribed to its type", () => {
    expect(webhooksFor(started, targets)).toEqual(["wh_sessions"])
    expect(webhooksFor(warning, targets)).toEqual(["wh_budgets"])
    expect(webhooksFor(spike, targets)).toEqual([])
  })

  it("sends a notify rule's firing to every webhook, a log rule's to rule.triggered's subscribers only (spec §6.5)", () => {
    expect(webhooksFor(firing("rule_n", "notify"), targets)).toEqual(["wh_sessions", "wh_rules", "wh_budgets"])
    expect(webhooksFor(firing("rule_n", "log"), targets)).toEqual(["wh_rules"])
    expect(webhooksFor(firing("rule_n", "block"), targets)).toEqual(["wh_rules"])
  })

  it("has none to send to where the tenant has no webhook", () => {
    expect(webhooksFor(firing("rule_n", "notify"), noTargets)).toEqual([])
  })
})

describe("channelsFor", () => {
  it("sends a notify rule's firing to the enabled channels the rule names, each once", () => {
    expect(channelsFor(firing("rule_n", "notify"), targets, rules)).toEqual(["ch_ops", "ch_dev"])
    // A channel that is not an enabled channel of the tenant is left out.
    expect(channelsFor(firing("rule_off", "notify"), targets, rules)).toEqual(["ch_ops"])
  })

  it("sends nothing for a rule that names no channels, names them wrongly, or is not held", () => {
    expect(channelsFor(firing("rule_none", "notify"), targets, rules)).toEqual([])
    expect(channelsFor(firing("rule_odd", "notify"), targets, rules)).toEqual([])
    expect(channelsFor(firing("rule_gone", "notify"), targets, rules)).toEqual([])
  })

  it("sends only notify firings to a rule's channels", () => {
    expect(channelsFor(firing("rule_n", "warn"), targets, rules)).toEqual([])
    expect(channelsFor(firing("rule_n", "log"), targets, rules)).toEqual([])
  })

  it("sends budget and anomaly events to the org's alert channels, and sessions to none", () => {
    expect(channelsFor(warning, targets, rules)).toEqual(["ch_alerts"])
    expect(channelsFor(exceeded, targets, rules)).toEqual(["ch_alerts"])
    expect(channelsFor(spike, targets, rules)).toEqual(["ch_alerts"])
    expect(channelsFor(started, targets, rules)).toEqual([])
  })
})

describe("topicOf", () => {
  it("coalesces a rule's firings per user, an anomaly type's per user, and never a budget event", () => {
    expect(topicOf(firing("rule_n", "notify", "user_1"))).toBe("rule:rule_n:user_1")
    expect(topicOf(firing("rule_n", "notify", "user_2"))).toBe("rule:rule_n:user_2")
    expect(topicOf(spike)).toBe("anomaly:token_spike:user_1")
    expect(topicOf(warning)).toBe(warning.id)
  })
})

describe("recipientsOf", () => {
  const live: TenantTargets = { webhooks: [{ id: "wh_live", events: ["session.started"] }], channels: new Set(["ch_live"]), alertChannels: ["ch_live"] }
  const directory: TargetDirectory = {
    targetsOf: (orgId, environment) => (orgId === "org_1" && environment === "live" ? live : noTargets),
    rulesFor: (orgId) => (orgId === "org_1" ? [{ id: "rule_n", action_config: { channels: ["ch_live"] } }] : [])
  }

  it("addresses each event with its own tenant's targets, once however often it is listed", () => {
    const inTest = event("session.started", "sess_2", {}, { ...at, environment: "test" })
    const elsewhere = event("budget.warning", "rule_x:d", {}, { ...at, org_id: "org_2" })
    const notify = firing("rule_n", "notify")
    expect(recipientsOf([started, inTest, elsewhere, notify, started, warning], directory)).toEqual({
      webhooks: [
        { event_id: started.id, webhook_id: "wh_live" },
        { event_id: notify.id, webhook_id: "wh_live" }
      ],
      channels: [
        { event_id: notify.id, channel_id: "ch_live", topic: "rule:rule_n:user_1" },
        { event_id: warning.id, channel_id: "ch_live", topic: warning.id }
      ]
    })
  })

  it("has no recipients for no events", () => {
    expect(recipientsOf([], directory)).toEqual({ webhooks: [], channels: [] })
  })
})
