import { parse } from "csv-parse/sync"
import { randomUUID } from "node:crypto"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Browser } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { clickText, launchBrowser, openPage, screenshot, signIn, waitForText } from "./browser.ts"

// The Overview's usage download, in a real browser against the real service.

let server: TestServer
let browser: Browser
let downloads: string
let org: Bootstrapped

beforeAll(async () => {
  downloads = mkdtempSync(join(tmpdir(), "usage-export-downloads-"))
  ;[server, browser] = await Promise.all([startServer(), launchBrowser(downloads)])
  org = await bootstrapOrg(server.databaseUrl, "dash-export", "team")
  const signal = (session: string, metadata: Record<string, unknown>) =>
    call(server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      headers: { "idempotency-key": randomUUID() },
      body: { type: "post-tool", adapter: "claude-code", session_id: session, metadata }
    })
  for (
    const answer of await Promise.all([
      signal("s1", { model: "claude-sonnet-4", tokens_in: 1200, tokens_out: 300 }),
      signal("s1", { model: "claude-sonnet-4", tokens_in: 800, tokens_out: 200 }),
      signal("s2", { model: "gpt-4o", tokens_in: 100, tokens_out: 50 })
    ])
  ) expect(answer.status, JSON.stringify(answer.body)).toBe(200)
})
afterAll(async () => {
  await browser?.close()
  await server?.stop()
  rmSync(downloads, { recursive: true, force: true })
})

const filesIn = (dir: string) => readdirSync(dir).filter((f) => !f.endsWith(".crdownload"))

describe("the usage download on the Overview", () => {
  it("downloads this month's usage per user and model as CSV, the same figures as the API's", async () => {
    const page = await openPage(browser)
    await signIn(page, server.baseUrl, org.api_key_live!)
    await waitForText(page, "Download usage")
    // One row per user and model: day and project unchecked.
    await page.click("input[name=by-day]")
    await page.click("input[name=by-project]")
    await clickText(page, "Download")
    const text = await waitForText(page, /Saved usage-\S+\.csv/)
    const name = /Saved (usage-\S+\.csv)\./.exec(text)![1]!
    const [file] = await waitFor(async () => filesIn(downloads), (files) => files.includes(name), { what: "the download" })
    expect(file).toBe(name)
    const rows = parse(readFileSync(join(downloads, name), "utf8"), { columns: true }) as Array<Record<string, string>>
    expect(rows.map((r) => [r.user_id, r.user_name, r.model, r.signals, r.tokens_in, r.tokens_out]).sort()).toEqual([
      [org.user_id, "Admin", "claude-sonnet-4", "2", "2000", "500"],
      [org.user_id, "Admin", "gpt-4o", "1", "100", "50"]
    ])
    const report = await call(server, "GET", "/api/v1/usage?group_by=model", { key: org.api_key_live! })
    const cost = (model: string) => report.body.data.find((g: { key: string }) => g.key === model).cost_usd
    expect(rows.map((r) => [r.model, Number(r.cost_usd)]).sort()).toEqual([["claude-sonnet-4", cost("claude-sonnet-4")], ["gpt-4o", cost("gpt-4o")]])
    await screenshot(page, "usage-export")
    expect(page.errors).toEqual([])
  })

  it("shows the API's refusal when the period ends before it starts, and saves nothing", async () => {
    const before = filesIn(downloads).length
    const page = await openPage(browser)
    await signIn(page, server.baseUrl, org.api_key_live!)
    await waitForText(page, "Download usage")
    await page.$eval("input[name=from]", (el) => {
      const input = el as unknown as { value: string; dispatchEvent: (e: unknown) => boolean }
      input.value = "2026-02-10"
      input.dispatchEvent(new (globalThis as unknown as { Event: new(type: string, init: object) => unknown }).Event("input", { bubbles: true }))
    })
    await page.$eval("input[name=to]", (el) => {
      const input = el as unknown as { value: string; dispatchEvent: (e: unknown) => boolean }
      input.value = "2026-02-01"
      input.dispatchEvent(new (globalThis as unknown as { Event: new(type: string, init: object) => unknown }).Event("input", { bubbles: true }))
    })
    await clickText(page, "Download")
    await waitForText(page, "from must be before to")
    expect(filesIn(downloads)).toHaveLength(before)
    expect(page.errors).toEqual([])
  })
})
