import type { Browser } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, call, startServer, type TestServer } from "../../support/harness.ts"
import { startReceiver } from "../../support/receiver.ts"
import { waitFor } from "../../support/wait.ts"
import { clickText, goTo, launchBrowser, openPage, screenshot, signIn, waitForText } from "./browser.ts"

let server: TestServer
let browser: Browser

beforeAll(async () => {
  ;[server, browser] = await Promise.all([
    startServer({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT: "1 second", WEBHOOK_POLL_INTERVAL: "20 millis" } }),
    launchBrowser()
  ])
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe("notification channels in the dashboard", () => {
  it("creates a Slack channel, sends it a test message, and routes the admin alerts to it", async () => {
    const receiver = await startReceiver()
    try {
      const org = await bootstrapOrg(server.databaseUrl, "dash-channels", "team")
      const page = await openPage(browser)
      await signIn(page, server.baseUrl, org.api_key_live!)
      await goTo(page, server.baseUrl, "/channels")
      await waitForText(page, "No channels yet")
      await clickText(page, "New channel")
      await page.type("form[aria-label='New channel'] input[name=name]", "Team room")
      await page.type("form[aria-label='New channel'] input[name=url]", receiver.url)
      await clickText(page, "Create channel")
      // The URL is a secret: the list shows its origin only.
      const listed = await waitForText(page, "Team room")
      expect(listed).not.toContain("/hook")
      await clickText(page, "Send test")
      await waitForText(page, "Test message sent.")
      await waitFor(async () => receiver.received.length, (n) => n >= 1, { what: "the test message" })
      expect(JSON.parse(receiver.received[0]!.body).text).toBeTypeOf("string") // Slack's incoming-webhook format
      await clickText(page, "Not sent")
      await waitForText(page, "Sent here")
      const orgNow = await call(server, "GET", "/api/v1/org", { key: org.api_key_live! })
      const channels = await call(server, "GET", "/api/v1/channels", { key: org.api_key_live! })
      expect(orgNow.body.alert_channels).toEqual([channels.body.data[0].id])
      await screenshot(page, "channels")
      expect(page.errors).toEqual([])
      await page.close()
    } finally {
      await receiver.close()
    }
  })
})
