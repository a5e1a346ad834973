import { describe, expect, it } from "vitest"
import { channelIdsOf, channelProblems, redactUrl } from "../../src/domain/channels.ts"
import { amount, type NotificationContext, render } from "../../src/domain/notification-text.ts"
import { discordBody, emailMessage, slackBody } from "../../src/notifications/formats.ts"

const firing = (over: Partial<NotificationContext> = {}): NotificationContext => ({
  facts: {
    type: "rule.triggered",
    ts: "2026-11-25T10:00:00.000Z",
    data: { rule_id: "rule_1", rule_name: "No <gpt-5> @everyone", action: "notify", user_id: "usr_1", model: "gpt-5", session_id: "ses_1", event_id: "evt_1" }
  },
  firings: 1,
  summary: false,
  windowSeconds: 300,
  userLabel: "Ada <ada@example.com>",
  baseUrl: "https://signals.example.com",
  ...over
})

describe("notification text", () => {
  it("says what happened in words, with a link to the dashboard when the base URL is known", () => {
    const m = render(firing())
    expect(m.title).toBe("Rule “No <gpt-5> @everyone” fired for Ada <ada@example.com>")
    expect(m.lines).toContain("Model: gpt-5")
    expect(m.link).toBe("https://signals.example.com/#/sessions/ses_1")
    expect(render(firing({ baseUrl: undefined })).link).toBeUndefined()
  })

  it("a summary counts the firings it covers and names the window", () => {
    expect(render(firing({ summary: true, firings: 1234 })).title).toBe(
      "Rule “No <gpt-5> @everyone” fired 1,234 times more for Ada <ada@example.com> within 5 min"
    )
    expect(render(firing({ summary: true, firings: 1, windowSeconds: 45 })).title).toContain("fired once more for Ada <ada@example.com> within 45 s")
  })

  it("budgets read as an amount against the threshold", () => {
    const budget = (type: string, metric: string, current: number, threshold: number) =>
      render(
        firing({
          facts: { type, ts: "", data: { rule_id: "r", rule_name: "Team", scope: "team", scope_id: "team_1", threshold, current, window: "monthly", metric } }
        })
      ).title
    expect(budget("budget.warning", "cost_usd", 81.5, 100)).toBe("Budget “Team” reached 82% of its threshold: $81.50 of $100.00")
    expect(budget("budget.exceeded", "tokens_total", 1_000_500, 1_000_000)).toBe("Budget “Team” was exceeded: 1,000,500 tokens of 1,000,000 tokens")
    expect(amount("cost_usd", 0.0123)).toBe("$0.0123")
  })
})

describe("chat and e-mail formats", () => {
  it("Slack text escapes the control characters of mrkdwn; Discord pings nobody and stays within 2,000 characters", () => {
    const m = render(firing())
    expect(slackBody(m).text).toContain("No &lt;gpt-5&gt; @everyone")
    expect(discordBody(m).allowed_mentions).toEqual({ parse: [] })
    expect(discordBody({ title: "t", lines: ["x".repeat(5000)], link: undefined }).content).toHaveLength(2000)
  })

  it("an e-mail subject is one line", () => {
    expect(emailMessage({ title: "a\r\nBcc: x@example.com", lines: [], link: undefined }).subject).toBe("a Bcc: x@example.com")
  })
})

describe("channel validation", () => {
  const draft = { name: "ops", kind: "slack" as const, url: "https://hooks.slack.com/services/T/B/secret", addresses: [], coalesce_seconds: 300 }
  it("accepts a well-formed channel and names each problem otherwise", () => {
    expect(channelProblems(draft)).toEqual([])
    expect(channelProblems({ ...draft, url: undefined })).toEqual(["url: required for a slack channel (its incoming-webhook URL)"])
    expect(channelProblems({ ...draft, kind: "email", url: undefined, addresses: ["nope"] })).toEqual(["addresses: not e-mail addresses: \"nope\""])
    expect(channelProblems({ ...draft, coalesce_seconds: 0 })).toHaveLength(1)
  })

  it("redacts a chat URL to its origin", () => {
    expect(redactUrl(draft.url)).toBe("https://hooks.slack.com/…")
  })

  it("a rule's channels are a list of ids, for notify rules only", () => {
    expect(channelIdsOf("notify", {})).toEqual({ ids: [] })
    expect(channelIdsOf("notify", { channels: ["ch_a", "ch_a", "ch_b"] })).toEqual({ ids: ["ch_a", "ch_b"] })
    expect(channelIdsOf("notify", { channels: "ch_a" })).toHaveProperty("problem")
    expect(channelIdsOf("block", { channels: ["ch_a"] })).toHaveProperty("problem")
  })
})
