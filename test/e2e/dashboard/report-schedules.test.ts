import { describe, expect, it } from "vitest"
import { bootstrapOrg, call } from "../../support/harness.ts"
import { clickText, goTo, openPage, screenshot, signIn, waitForText, withDashboard } from "./browser.ts"

const dash = withDashboard({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" } })

describe("scheduled reports in the dashboard", () => {
  it("creates a weekly report to a channel, pauses it and deletes it", async () => {
    const org = await bootstrapOrg(dash.server.databaseUrl, "dash-reports", "team")
    const key = org.api_key_live!
    const channel = await call(dash.server, "POST", "/api/v1/channels", { key, body: { name: "Finance room", kind: "slack", url: "http://127.0.0.1:9/r" } })
    expect(channel.status).toBe(201)
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, key)
    await goTo(page, dash.server.baseUrl, "/channels")
    await waitForText(page, "No scheduled reports yet.")
    await clickText(page, "New report")
    await page.type("form[aria-label='New report'] input[name=name]", "Finance weekly")
    await page.click(`form[aria-label='New report'] input[name=channel][value='${channel.body.id}']`)
    await clickText(page, "Create report")
    await waitForText(page, "Finance weekly")

    const listed = await call(dash.server, "GET", "/api/v1/report-schedules", { key })
    expect(listed.body.data).toEqual([expect.objectContaining({ name: "Finance weekly", period: "weekly", channels: [channel.body.id], enabled: true })])
    const shown = await waitForText(page, "scheduled")
    expect(shown).toContain("Finance room")
    await screenshot(page, "report-schedules")

    await clickText(page, "Pause")
    await waitForText(page, "Resume")
    expect((await call(dash.server, "GET", `/api/v1/report-schedules/${listed.body.data[0].id}`, { key })).body.enabled).toBe(false)

    await clickText(page, "Delete", 1)
    await clickText(page, "Yes, delete")
    await waitForText(page, "No scheduled reports yet.")
    expect((await call(dash.server, "GET", "/api/v1/report-schedules", { key })).body.data).toEqual([])
    expect(page.errors).toEqual([])
    await page.close()
  })
})
