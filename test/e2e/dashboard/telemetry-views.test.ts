import { describe, expect, it } from "vitest"
import { bootstrapOrg, call } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { clickText, goTo, openPage, screenshot, signIn, visibleText, waitForText, withDashboard } from "./browser.ts"

const dash = withDashboard()

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
/** Claude Code's counters as its exporter sends them (delta, http/json). */
const counters = (atMs: number, points: Record<string, ReadonlyArray<readonly [number, Record<string, string>]>>) => ({
  resourceMetrics: [{
    resource: { attributes: [attr("service.name", "claude-code")] },
    scopeMetrics: [{
      metrics: Object.entries(points).map(([name, values]) => ({
        name,
        sum: {
          aggregationTemporality: 1,
          isMonotonic: true,
          dataPoints: values.map(([value, attributes]) => ({
            startTimeUnixNano: String(BigInt(atMs - 1000) * 1_000_000n),
            timeUnixNano: String(BigInt(atMs) * 1_000_000n),
            asDouble: value,
            attributes: Object.entries({ "session.id": "s-1", ...attributes }).map(([k, v]) => attr(k, v))
          }))
        }
      }))
    }]
  }]
})

describe("the tools' telemetry in the dashboard", () => {
  it("shows each user's productivity figures, by user and by team, and how each user is seen", async () => {
    const org = await bootstrapOrg(dash.server.databaseUrl, "dash-telemetry", "team")
    const admin = org.api_key_live!
    const team = await call(dash.server, "POST", "/api/v1/teams", { key: admin, body: { name: "Platform" } })
    const user = await call(dash.server, "POST", "/api/v1/users", { key: admin, body: { email: "ada@dash.test", name: "Ada", team_ids: [team.body.id] } })
    const license = await call(dash.server, "POST", "/api/v1/license-keys", { key: admin, body: { user_id: user.body.id } })
    await call(dash.server, "POST", "/api/v1/users", { key: admin, body: { email: "quiet@dash.test", name: "Quiet Quinn" } })
    const now = Date.now()
    const sent = await call(dash.server, "POST", "/engine/v1/otlp/v1/metrics", {
      key: license.body.key,
      body: counters(now, {
        "claude_code.lines_of_code.count": [[1234, { type: "added" }], [56, { type: "removed" }]],
        "claude_code.commit.count": [[7, {}]],
        "claude_code.code_edit_tool.decision": [[9, { decision: "accept" }]]
      })
    })
    expect(sent.status).toBe(200)
    // A hook signal from the bootstrap user, so the coverage shows both kinds.
    const hook = await call(dash.server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      body: { type: "post-tool", adapter: "claude-code", session_id: "dash-hook", metadata: { tool_name: "Bash" } }
    })
    expect(hook.status).toBe(200)

    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, admin)
    await goTo(page, dash.server.baseUrl, "/productivity")
    const byUser = await waitForText(page, "1,234")
    expect(byUser).toContain("Ada")
    expect(byUser).toMatch(/Ada\s+1,234\s+56\s+7\s+0\s+9\s+0/)
    await clickText(page, "team")
    const byTeam = await waitFor(() => visibleText(page), (seen) => /Platform\s+1,234/.test(seen), { what: "the team's row" })
    expect(byTeam).not.toContain("Quiet Quinn")
    await screenshot(page, "productivity")

    await goTo(page, dash.server.baseUrl, "/coverage")
    await waitFor(() => visibleText(page), (seen) => seen.includes("3 users: 1 through hooks only, 1 through telemetry only, 0 through both, 1 never seen"), {
      what: "the hook signal in the coverage"
    })
    const coverage = await visibleText(page)
    expect(coverage).toMatch(/Ada\s+telemetry/)
    expect(coverage).toMatch(/Quiet Quinn\s+none/)
    await page.select("form[aria-label='Filters'] select[name=seen_through]", "none")
    await clickText(page, "Apply")
    const filtered = await waitFor(() => visibleText(page), (seen) => !seen.includes("Ada"), { what: "the filtered list" })
    expect(filtered).toContain("Quiet Quinn")
    expect(page.url()).toContain("seen_through=none")
    await screenshot(page, "coverage")
    expect(page.errors).toEqual([])
    await page.close()
  })
})
