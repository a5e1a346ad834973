import { describe, expect, it } from "vitest"
import { bootstrapOrg, call } from "../../support/harness.ts"
import { clickText, goTo, openPage, signIn, withDashboard } from "./browser.ts"

/** The rule form with an org policy's secret kinds and protected files: shown, and kept through an edit. */
const dash = withDashboard()

describe("an org policy's secrets and protected files in the rule form", () => {
  it("shows them and keeps them when another field is edited", async () => {
    const org = await bootstrapOrg(dash.server.databaseUrl, "dash-secrets", "team")
    const condition = { secret_kinds: ["aws_access_token", "private_key"], protected_paths: ["**/{.env,.npmrc}", "~/.ssh/*"] }
    const created = await call(dash.server, "POST", "/api/v1/rules", {
      key: org.api_key_live!,
      body: { name: "No secrets", type: "org_policy", scope: "org", scope_id: org.org_id, condition, action: "block", action_config: { message: "no" } }
    })
    expect(created.status).toBe(201)
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    await goTo(page, dash.server.baseUrl, "/rules")
    await (await page.waitForSelector("button[aria-label='Edit No secrets']"))!.click()
    await page.waitForSelector("form.rule-form textarea[name=protected_paths]")
    const shown = await page.$eval("form.rule-form textarea[name=protected_paths]", (el) => (el as unknown as { value: string }).value)
    expect(shown).toBe("**/{.env,.npmrc}\n~/.ssh/*")
    await page.$eval("form.rule-form input[name=priority]", (el) => ((el as unknown as { value: string }).value = ""))
    await page.type("form.rule-form input[name=priority]", "7")
    await clickText(page, "Save rule")
    await page.waitForFunction(() =>
      (globalThis as unknown as { document: { querySelector: (s: string) => unknown } }).document.querySelector("form.rule-form") === null
    )
    const saved = await call(dash.server, "GET", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })
    expect(saved.body).toMatchObject({ priority: 7, condition })
    expect(page.errors).toEqual([])
    await page.close()
  })
})
