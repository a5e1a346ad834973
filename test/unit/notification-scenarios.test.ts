import { describe, expect, it } from "@effect/vitest"
import type { OutboxEvent } from "../../src/domain/notices.ts"
import { type NotificationFacts, render } from "../../src/domain/notification-text.ts"
import type { Rule } from "../../src/domain/rules.ts"
import { emailMessage } from "../../src/notifications/formats.ts"
import { foldHarness, rule } from "../support/fold-harness.ts"

/**
 * What an admin reads in a notification channel for what the engine raised: the events of the
 * engine core in process (test/support/fold-harness.ts), each rendered as the dispatcher renders
 * it (its webhook payload as the facts; the user as "name <e-mail>"; a summary for the firings
 * after the first in a coalescing window).
 */

const base = "https://signals.example.com"
const ada = "Ada Lovelace <ada@example.com>"
const prices = { "house-model": { input: 1_000, output: 4_000 } }

const facts = (n: OutboxEvent): NotificationFacts => n.payload as unknown as NotificationFacts

const read = (n: OutboxEvent, over: { firings?: number; summary?: boolean; windowSeconds?: number; userLabel?: string; baseUrl?: string } = {}) =>
  render({ facts: facts(n), firings: 1, summary: false, windowSeconds: 300, userLabel: ada, baseUrl: base, ...over })

describe("a rule that notifies", () => {
  const notify = rule({ type: "model_filter", name: "No frontier models", action: "notify", condition: { model: { in: ["frontier-1"] } } })

  it("names the rule, the user, the model, the action and the session, and links the session", () => {
    const h = foldHarness({ rules: [notify] })
    const answer = h.signal("alice", { model: "frontier-1" })
    const [fired] = h.notices("rule.triggered")
    expect(read(fired!)).toEqual({
      title: "Rule “No frontier models” fired for Ada Lovelace <ada@example.com>",
      lines: [
        "User: Ada Lovelace <ada@example.com>",
        "Model: frontier-1",
        "Action: notify",
        `Session: ${answer.session_id}`,
        "Further firings for this user within 5 min are summed up in one message."
      ],
      link: `${base}/#/sessions/${answer.session_id}`
    })
    // Without a public address there is no link; without a known name the user is their id.
    expect(read(fired!, { baseUrl: undefined as unknown as string }).link).toBeUndefined()
    expect(read(fired!, { userLabel: undefined as unknown as string }).title).toBe("Rule “No frontier models” fired for alice")
  })

  it("sums the later firings of a window in one message that links the rules", () => {
    const h = foldHarness({ rules: [notify] })
    for (let i = 0; i < 4; i++) h.signal("alice", { model: "frontier-1" })
    const last = h.notices("rule.triggered").at(-1)!
    expect(read(last, { summary: true, firings: 3, windowSeconds: 3_600 })).toEqual({
      title: "Rule “No frontier models” fired 3 times more for Ada Lovelace <ada@example.com> within 1 h",
      lines: [
        "After the first firing (already sent), the rule fired 3 times more in the same 1 h window for " +
        "Ada Lovelace <ada@example.com>; the last on model frontier-1."
      ],
      link: `${base}/#/rules`
    })
    expect(read(last, { summary: true, firings: 1, windowSeconds: 90 }).title).toBe(
      "Rule “No frontier models” fired once more for Ada Lovelace <ada@example.com> within 90 s"
    )
  })

  it("says when the signal named no model", () => {
    const projects = rule({ type: "org_policy", name: "Projects named", action: "notify", condition: { require_project_id: true } })
    const h = foldHarness({ rules: [projects] })
    h.signal("alice", { type: "post-tool", tool_name: "Bash" })
    expect(h.notices("rule.triggered").map((n) => read(n).lines[1])).toEqual(["Model: (none named)"])
  })
})

describe("a budget", () => {
  const team = (over: Partial<Rule> = {}) =>
    rule({
      type: "budget",
      name: "Platform team",
      scope: "team",
      scope_id: "team_platform",
      action: "notify",
      condition: { window: "monthly", metric: "cost_usd", threshold: 10 },
      ...over
    })

  it("reads as the amount spent against the threshold, with the scope and the window", () => {
    const h = foldHarness({ rules: [team()], prices, teams: { alice: ["team_platform"] } })
    h.signal("alice", { model: "house-model", tokens_in: 8_500 })
    h.signal("alice", { model: "house-model", tokens_in: 2_000 })
    const rendered = [...h.notices("budget.warning"), ...h.notices("budget.exceeded")].map((n) => read(n))
    expect(rendered).toEqual([
      {
        title: "Budget “Platform team” reached 85% of its threshold: $8.50 of $10.00",
        lines: ["Spent: $8.50 of $10.00 (85%)", "Scope: team team_platform", "Window: monthly, metric cost_usd"],
        link: `${base}/#/rules`
      },
      {
        title: "Budget “Platform team” was exceeded: $10.50 of $10.00",
        lines: ["Spent: $10.50 of $10.00 (105%)", "Scope: team team_platform", "Window: monthly, metric cost_usd"],
        link: `${base}/#/rules`
      }
    ])
  })

  it("of the org, in tokens, and in cents", () => {
    const org = team({ scope: "org", scope_id: "org_1", condition: { window: "daily", metric: "tokens_total", threshold: 1_000_000 } })
    const h = foldHarness({ rules: [org], prices })
    h.signal("alice", { model: "house-model", tokens_in: 1_000_500 })
    const [exceeded] = h.notices("budget.exceeded").map((n) => read(n))
    expect(exceeded).toEqual({
      title: "Budget “Platform team” was exceeded: 1,000,500 tokens of 1,000,000 tokens",
      lines: ["Spent: 1,000,500 tokens of 1,000,000 tokens (100%)", "Scope: the org", "Window: daily, metric tokens_total"],
      link: `${base}/#/rules`
    })
    const cents = team({ scope: "user", scope_id: "alice", condition: { window: "daily", metric: "cost_usd", threshold: 0.5 } })
    const small = foldHarness({ rules: [cents], prices })
    small.signal("alice", { model: "house-model", tokens_in: 600 })
    expect(small.notices("budget.exceeded").map((n) => read(n).title)).toEqual(["Budget “Platform team” was exceeded: $0.6000 of $0.5000"])
  })
})

describe("unusual activity", () => {
  it("says what was observed against the user's baseline, and links the session", () => {
    const h = foldHarness({ org: { plan: "team" } })
    const answers = [100, 120, 80, 100, 100, 1_000].map((tokens) => h.signal("alice", { tokens_in: tokens / 2, tokens_out: tokens / 2 }))
    const [spike] = h.notices("anomaly.detected")
    const session = answers.at(-1)!.session_id
    expect(read(spike!)).toEqual({
      title: "Unusual activity for Ada Lovelace <ada@example.com>: token spike",
      lines: ["User: Ada Lovelace <ada@example.com>", "Observed: 1,000 against a baseline of 100 (+900%)", `Session: ${session}`],
      link: `${base}/#/sessions/${session}`
    })
    expect(read(spike!, { summary: true, firings: 2, windowSeconds: 600 })).toEqual({
      title: "Unusual activity (token spike) 2 times more for Ada Lovelace <ada@example.com> within 10 min",
      lines: ["The last: observed 1,000 against a baseline of 100."],
      link: `${base}/#/sessions/${session}`
    })
  })
})

describe("the service's own alerts", () => {
  const alert = (type: string, message?: string, data: Record<string, unknown> = {}) =>
    render({
      facts: { type, ts: "2026-03-02T09:00:00.000Z", data, message },
      firings: 1,
      summary: false,
      windowSeconds: 300,
      userLabel: undefined,
      baseUrl: base
    })

  it("carry their own sentence and link the alerts page; a channel's test says it is set up", () => {
    expect(alert("webhook.failing", "Webhook https://hooks.example.com failed 20 times")).toEqual({
      title: "Webhook failing: deliveries paused",
      lines: ["Webhook https://hooks.example.com failed 20 times"],
      link: `${base}/#/alerts`
    })
    expect(alert("channel.failing", "Channel ops-slack failed")).toEqual({
      title: "Notification channel failing: messages paused",
      lines: ["Channel ops-slack failed"],
      link: `${base}/#/alerts`
    })
    expect(alert("webhook.failing")).toMatchObject({ lines: [""] })
    expect(alert("test", undefined, { channel_name: "ops-slack" })).toEqual({
      title: "Test message from signal-engine",
      lines: ["The channel “ops-slack” is set up: notify rules and admin alerts sent to it arrive like this."],
      link: undefined
    })
    // A kind this version does not know yet (sent by a newer node) still says what it is.
    expect(alert("audit.recorded", "rule changed")).toEqual({ title: "audit.recorded", lines: ["rule changed"], link: undefined })
    expect(alert("audit.recorded")).toEqual({ title: "audit.recorded", lines: [], link: undefined })
  })

  it("reach e-mail with the title as the subject", () => {
    const m = emailMessage(alert("channel.failing", "Channel ops-slack failed"))
    expect(JSON.stringify(m)).toContain("Notification channel failing: messages paused")
  })
})
