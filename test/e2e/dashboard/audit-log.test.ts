import { describe, expect, it } from "vitest"
import { bootstrapOrg, call } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { clickText, goTo, openPage, screenshot, signIn, visibleText, waitForText, withDashboard } from "./browser.ts"

const dash = withDashboard()

describe("the audit log in the dashboard", () => {
  it("shows a change made in the dashboard, what changed, and filters by resource", async () => {
    const org = await bootstrapOrg(dash.server.databaseUrl, "dash-audit", "team")
    await call(dash.server, "POST", "/api/v1/projects", { key: org.api_key_live!, body: { name: "made-by-script" } })
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    await goTo(page, dash.server.baseUrl, "/settings?tab=teams")
    await page.type("form[aria-label='New team'] input[name=name]", "Platform")
    await clickText(page, "Add")
    await waitForText(page, "Platform")

    await goTo(page, dash.server.baseUrl, "/audit")
    const text = await waitForText(page, "team.create")
    expect(text).toContain("project.create")
    expect(text).toContain("127.0.0.1")
    // The team's fields after its creation, as the row's details show them.
    await page.click("details summary")
    await waitForText(page, "\"name\": \"Platform\"")

    await page.select("form[aria-label='Filters'] select[name=resource_type]", "project")
    await clickText(page, "Apply")
    const filtered = await waitFor(() => visibleText(page), (seen) => !seen.includes("team.create"), { what: "the filtered list" })
    expect(filtered).toContain("project.create")
    expect(page.url()).toContain("resource_type=project")
    await screenshot(page, "audit-log")
    expect(page.errors).toEqual([])
    await page.close()
  })
})
