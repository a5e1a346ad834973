import { describe, expect, it } from "vitest"
import { render } from "../../src/domain/notification-text.ts"
import type { SpendReport } from "../../src/domain/report-schedules.ts"
import { change } from "../../src/domain/report-text.ts"
import { emailMessage } from "../../src/notifications/formats.ts"

const report = (over: Partial<SpendReport> = {}): SpendReport => ({
  schedule_id: "rs_1",
  schedule_name: "Finance",
  period: "monthly",
  from: "2026-10-01T04:00:00.000Z",
  to: "2026-11-01T04:00:00.000Z",
  time_zone: "America/New_York",
  totals: { cost_usd: 1234.5, tokens: 2_500_000, signals: 900, sessions: 40 },
  previous: { cost_usd: 1000, tokens: 2_000_000, signals: 800, sessions: 35 },
  top_users: [{ label: "Ada <ada@example.com>", cost_usd: 900, tokens: 2_000_000 }],
  top_teams: [],
  top_models: [{ label: "claude-sonnet-4", cost_usd: 1234.5, tokens: 2_500_000 }],
  ...over
})

const rendered = (r: SpendReport, baseUrl?: string) =>
  render({ facts: { type: "report.spend", ts: r.to, data: { ...r } }, firings: 1, summary: false, windowSeconds: 300, userLabel: undefined, baseUrl })

describe("spend report text", () => {
  it("names the period in the org's zone (the end is exclusive), the figures, the change and the top lists", () => {
    const m = rendered(report(), "https://signals.example.com")
    expect(m.title).toBe("Monthly spend report “Finance”: $1,234.50")
    expect(m.lines).toEqual([
      "Period: 2026-10-01 to 2026-10-31 (America/New_York)",
      "Spend: $1,234.50, 2,500,000 tokens, 900 signals in 40 sessions",
      "Change: +23% from $1,000.00 (tokens 2,000,000 → 2,500,000)",
      "Top users: Ada <ada@example.com> $900.00 (2,000,000 tokens)",
      "Top models: claude-sonnet-4 $1,234.50 (2,500,000 tokens)"
    ])
    expect(m.link).toBe("https://signals.example.com/#/overview")
    expect(emailMessage(m).text).toContain("Top users: Ada <ada@example.com>")
  })

  it("says how spend changed, also from or to nothing", () => {
    expect(change(50, 100)).toBe("-50% from $100.00")
    expect(change(0, 0)).toBe("no change")
    expect(change(3, 0)).toBe("new this period")
    expect(change(0, 8)).toBe("-100% from $8.00")
  })
})
