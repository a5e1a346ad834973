import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { goTo, openPage, screenshot, signIn, waitForText, withDashboard } from "./browser.ts"

/** Secrets found, as an admin sees them: a count on the Overview that leads to the events with findings. */
const dash = withDashboard()

describe("findings on the dashboard", () => {
  it("the Overview counts this month's findings and its card lists the events that have them", async () => {
    const org = await bootstrapOrg(dash.server.databaseUrl, "dash-findings", "team")
    const signal = (type: string, metadata: Record<string, unknown>) =>
      call(dash.server, "POST", "/engine/v1/signals", {
        key: org.license_key,
        headers: { "idempotency-key": randomUUID() },
        body: { type, adapter: "claude-code", session_id: "s-findings", metadata }
      })
    const fingerprint = (c: string) => c.repeat(32)
    expect((await signal("user-prompt", { findings: [{ kind: "aws_access_token", where: "prompt", fingerprint: fingerprint("a") }] })).status).toBe(200)
    expect(
      (await signal("post-tool", {
        tool_name: "Bash",
        findings: [
          { kind: "github_pat", where: "tool_response.stdout", fingerprint: fingerprint("b") },
          { kind: "private_key", where: "tool_response.stdout", fingerprint: fingerprint("c") }
        ]
      })).status
    ).toBe(200)
    expect((await signal("pre-tool", { tool_name: "Bash", command: "ls" })).status).toBe(200)
    await waitFor(
      async () => (await call(dash.server, "GET", "/api/v1/events", { key: org.api_key_live! })).body.data?.length,
      (n) => n === 3,
      { timeoutMs: 10_000, what: "the three events" }
    )

    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    await goTo(page, dash.server.baseUrl, "/")
    const card = await page.waitForSelector("a.card[title='Events with findings']")
    await waitForText(page, "Secrets found this month")
    expect(await card!.evaluate((el) => (el as unknown as { innerText: string }).innerText)).toBe("Secrets found this month\n3")
    await screenshot(page, "overview-findings")
    await card!.click()
    await waitForText(page, "github_pat, private_key")
    const rows = await page.$$eval("table tbody tr", (trs) => trs.map((tr) => (tr as unknown as { innerText: string }).innerText))
    expect(rows).toHaveLength(2)
    expect(rows.join("\n")).toContain("aws_access_token")
    expect(rows.join("\n")).not.toContain("pre-tool")
    await screenshot(page, "events-with-findings")
    expect(page.errors).toEqual([])
    await page.close()
  })
})
