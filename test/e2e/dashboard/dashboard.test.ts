import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call } from "../../support/harness.ts"
import { startReceiver } from "../../support/receiver.ts"
import { waitFor } from "../../support/wait.ts"
import { clickText, goTo, layoutWidth, openPage, screenshot, signIn, tabTo, visibleText, waitForText, withDashboard } from "./browser.ts"

// What an admin does in the dashboard, in a real dash.browser, against the real service.

const env = {
  WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
  WEBHOOK_RETRY_SCALE: "0.001",
  WEBHOOK_TIMEOUT: "1 second",
  WEBHOOK_POLL_INTERVAL: "20 millis"
}

const dash = withDashboard({ env })
let orgs = 0
const newOrg = () => bootstrapOrg(dash.server.databaseUrl, `dash-${++orgs}`, "team")

/** A signal as the adapters send it: with an idempotency key, so its verdict is kept. */
const signal = (org: Bootstrapped, metadata: Record<string, unknown>, type = "post-tool", sessionId = "cc-session-1") =>
  call(dash.server, "POST", "/engine/v1/signals", {
    key: org.license_key,
    headers: { "idempotency-key": randomUUID() },
    body: { type, adapter: "claude-code", session_id: sessionId, metadata }
  })

const sonnet = { model: "claude-sonnet-4", tokens_in: 1200, tokens_out: 300 }

describe("the dashboard in a browser", () => {
  it("signs in with a live key, shows the environment, and today's spend on the Overview", async () => {
    const org = await newOrg()
    await signal(org, sonnet)
    const page = await openPage(dash.browser)
    await page.goto(`${dash.server.baseUrl}/`)
    await waitForText(page, "Sign in with a management API key")
    await page.type("input[name=key]", "sek_live_00000000000000000000000000000000")
    await page.keyboard.press("Enter")
    await waitForText(page, "That key is not valid")
    await screenshot(page, "sign-in")
    await page.$eval("input[name=key]", (el) => ((el as unknown as { value: string }).value = ""))
    await page.type("input[name=key]", org.api_key_live!)
    await page.keyboard.press("Enter")
    await waitForText(page, "Spend today")
    const text = await waitForText(page, "Spend per day, last 30 days")
    expect(text).toMatch(/live data/i)
    await waitForText(page, "$0.0081") // 1,200 input and 300 output tokens of claude-sonnet-4
    await waitForText(page, "Spend per day by user, top 1, last 30 days")
    await screenshot(page, "overview")
    await clickText(page, "model")
    await waitForText(page, "Spend per day by model, top 1, last 30 days")
    // Spend and tokens per day, and the top models' spend per day: three charts drawn.
    expect(await page.$$("figure.chart canvas")).toHaveLength(3)
    // By keyboard alone: Tab to a page's link, Enter opens it.
    await tabTo(page, "Sessions")
    await page.keyboard.press("Enter")
    await waitForText(page, "1 session")
    expect(await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash)).toBe("#/sessions")
    expect(page.errors).toEqual([])
    await page.close()
  })

  it("a test key shows test data, said so in the header", async () => {
    const org = await newOrg()
    await signal(org, sonnet, "post-tool", "live-only")
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_test!)
    await goTo(page, dash.server.baseUrl, "/sessions")
    const text = await waitForText(page, "No sessions yet")
    expect(text).toMatch(/test data/i)
    await page.close()
  })

  it("shows a session made by signals, then a block rule made in Rules blocks the next signal in the timeline", async () => {
    const org = await newOrg()
    expect((await signal(org, sonnet)).body.ok).toBe(true)
    expect((await signal(org, { ...sonnet, error_code: "rate_limited" })).body.ok).toBe(true)
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)

    // Rules: a block rule without a message is refused with the API's own words; with one, made.
    await goTo(page, dash.server.baseUrl, "/rules")
    await waitForText(page, "No rules yet")
    await clickText(page, "New rule")
    await page.waitForSelector("form.rule-form")
    await page.type("input[name=name]", "No o3")
    await page.select("select[name=type]", "model_filter")
    await page.waitForSelector("textarea[name=models]")
    await page.type("textarea[name=models]", "o3")
    await clickText(page, "Create rule")
    await waitForText(page, "action_config.message: required for block")
    await page.type("input[name=message]", "o3 is not allowed here")
    await screenshot(page, "rules-form")
    await clickText(page, "Create rule")
    await waitForText(page, "Listed in evaluation order")
    const rules = await waitForText(page, "o3 is not allowed here")
    expect(rules).toContain("No o3")
    expect(rules).toContain("Enabled")
    await screenshot(page, "rules")

    const blocked = await signal(org, { model: "o3", tokens_in: 500, tokens_out: 50 })
    expect(blocked.body).toMatchObject({ ok: false, action: "block", message: "o3 is not allowed here" })

    await goTo(page, dash.server.baseUrl, "/sessions")
    await waitForText(page, "1 session")
    await screenshot(page, "sessions")
    // Filters go to the API and into the URL; Clear brings every session back.
    await page.type("form.filters input[name=user_id]", "user_nobody")
    await clickText(page, "Apply")
    await waitForText(page, "No session matches these filters.")
    expect(await page.evaluate(() => (globalThis as unknown as { location: { hash: string } }).location.hash)).toBe("#/sessions?user_id=user_nobody")
    await clickText(page, "Clear")
    await waitForText(page, "1 session")
    await (await page.waitForSelector("table a[href^='#/sessions/sess_']"))!.click()
    const timeline = await waitForText(page, "o3 is not allowed here")
    expect(timeline).toContain("Timeline")
    expect(timeline).toContain("block")
    expect(timeline).toContain("error: rate_limited")

    expect(await page.$$("li.signal.verdict-block")).toHaveLength(1)
    expect(await page.$$("li.signal.error-signal")).toHaveLength(1)
    await screenshot(page, "session-timeline")

    // Events: error_only keeps the failed model call only.
    await goTo(page, dash.server.baseUrl, "/events?error_only=true")
    const events = await waitForText(page, "rate_limited")
    expect(events).not.toContain("o3")
    await screenshot(page, "events")

    // Edit: the priority changes, and the list says so.
    await goTo(page, dash.server.baseUrl, "/rules")
    await (await page.waitForSelector("button[aria-label='Edit No o3']"))!.click()
    await page.waitForSelector("form.rule-form input[name=priority]")
    await page.$eval("form.rule-form input[name=priority]", (el) => ((el as unknown as { value: string }).value = ""))
    await page.type("form.rule-form input[name=priority]", "5")
    await clickText(page, "Save rule")
    await page.waitForFunction(() =>
      (globalThis as unknown as { document: { querySelector: (s: string) => { innerText: string } | null } }).document
        .querySelector("table tbody tr td")?.innerText.trim() === "5"
    )
    expect(await page.$("form.rule-form")).toBeNull()

    // Disable, then delete with confirmation.
    await goTo(page, dash.server.baseUrl, "/rules")
    await (await page.waitForSelector("button[aria-label='Disable No o3']"))!.click()
    await page.waitForSelector("button[aria-label='Enable No o3']")
    await clickText(page, "Delete")
    await waitForText(page, "Delete “No o3”?")
    await clickText(page, "Yes, delete")
    await waitForText(page, "No rules yet")
    expect(page.errors).toEqual([])
    await page.close()
  })

  it("shows a budget warning on the Overview and in Alerts once spend reaches 80%", async () => {
    const org = await newOrg()
    const rule = await call(dash.server, "POST", "/api/v1/rules", {
      key: org.api_key_live!,
      body: {
        name: "Daily spend",
        type: "budget",
        scope: "org",
        scope_id: org.org_id,
        condition: { window: "daily", metric: "cost_usd", threshold: 0.01 },
        action: "warn",
        action_config: { message: "Daily spend is nearly used up" }
      }
    })
    expect(rule.status).toBe(201)
    await signal(org, sonnet) // $0.0081 of $0.01
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    const overview = await waitForText(page, "81%")
    expect(overview).toContain("Daily spend")
    expect(overview).toContain("warning")
    await goTo(page, dash.server.baseUrl, "/alerts")
    const alerts = await waitForText(page, "Budgets and limits at 80% or over")
    await waitForText(page, "81%")
    expect(alerts).not.toContain("No budget or limit is at 80% or more.")
    await signal(org, sonnet) // over the threshold: the warn rule warns on the signals after it
    for (let i = 0; i < 3; i++) await signal(org, sonnet)
    // Five signals make the user's baseline; one with ten times the tokens is a spike.
    await signal(org, { model: "claude-sonnet-4", tokens_in: 15_000, tokens_out: 3_000 })
    await goTo(page, dash.server.baseUrl, "/overview")
    await goTo(page, dash.server.baseUrl, "/alerts")
    await waitForText(page, "exceeded")
    await waitForText(page, "Daily spend is nearly used up")
    const raised = await waitForText(page, "anomaly.detected")
    expect(raised).toContain("token_spike")
    expect(raised).toContain("budget.warning")
    expect(raised).toContain("budget.exceeded")
    await screenshot(page, "alerts")
    await page.close()
  })

  it("says on the Overview which identities fleet credentials refused", async () => {
    const org = await newOrg()
    const fleet = await call(dash.server, "POST", "/api/v1/fleet-credentials", { key: org.api_key_live!, body: { name: "fleet" } })
    expect(fleet.status).toBe(201)
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    const before = await waitForText(page, "Spend today")
    expect(before).not.toContain("Fleet credentials refused")
    const refused = await call(dash.server, "POST", "/engine/v1/hooks/claude-code", {
      key: fleet.body.key,
      headers: { "x-signal-engine-user": "newcomer@example.com" },
      body: { hook_event_name: "UserPromptSubmit", session_id: "s-fleet", prompt: "hi" }
    })
    expect(refused.status).toBe(403)
    await goTo(page, dash.server.baseUrl, "/sessions")
    await goTo(page, dash.server.baseUrl, "/overview")
    const text = await waitForText(page, "Fleet credentials refused 1 records of 1 unknown identities")
    expect(text).toContain("newcomer@example.com")
    expect(page.errors).toEqual([])
    await page.close()
  })

  it("shows a failing webhook and re-enables it", async () => {
    const receiver = await startReceiver(() => ({ status: 500 }))
    try {
      const org = await newOrg()
      const hook = await call(dash.server, "POST", "/api/v1/webhooks", {
        key: org.api_key_live!,
        body: { url: receiver.url, events: ["session.started"], secret: "a-webhook-secret-of-at-least-32-characters" }
      })
      expect(hook.status).toBe(201)
      await signal(org, sonnet)
      await waitFor(
        async () => (await call(dash.server, "GET", "/api/v1/webhooks", { key: org.api_key_live! })).body.data[0],
        (w) => w.failing === true,
        { timeoutMs: 30_000, what: "the webhook to be failing" }
      )
      const page = await openPage(dash.browser)
      await signIn(page, dash.server.baseUrl, org.api_key_live!)
      await goTo(page, dash.server.baseUrl, "/webhooks")
      await waitForText(page, "deliveries paused after 5 failed attempts")
      await clickText(page, "Deliveries")
      const log = await waitForText(page, "Attempt 5: HTTP 500")
      expect(log).toContain("session.started")
      await screenshot(page, "webhooks-failing")
      receiver.behave(() => ({ status: 200 }))
      await clickText(page, "Re-enable")
      await waitForText(page, "delivering")
      expect(await visibleText(page)).not.toContain("failing")
      await clickText(page, "Send test")
      await waitForText(page, /Test delivered: HTTP 200/)
      await screenshot(page, "webhooks")
      await goTo(page, dash.server.baseUrl, "/alerts")
      await waitForText(page, "webhook.failing")

      // A new webhook: a short secret is refused as the API says; the secret is never shown.
      await goTo(page, dash.server.baseUrl, "/webhooks")
      await clickText(page, "New webhook")
      await page.type("form[aria-label='New webhook'] input[name=url]", `${receiver.url}/second`)
      await page.type("form[aria-label='New webhook'] input[name=secret]", "short")
      await page.$eval("form[aria-label='New webhook'] input[name=secret]", (el) => el.removeAttribute("minlength"))
      await clickText(page, "Create webhook")
      await waitForText(page, "The API refused the webhook")
      const secret = "another-webhook-secret-of-32-characters-at-least"
      await page.$eval("form[aria-label='New webhook'] input[name=secret]", (el) => ((el as unknown as { value: string }).value = ""))
      await page.type("form[aria-label='New webhook'] input[name=secret]", secret)
      await clickText(page, "Create webhook")
      const listed = await waitForText(page, `${receiver.url}/second`)
      expect(listed).not.toContain(secret)
      expect(await page.content()).not.toContain(secret)
      await page.close()
    } finally {
      await receiver.close()
    }
  })

  it("creates an API key and shows it once, with a copy button", async () => {
    const org = await newOrg()
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    await goTo(page, dash.server.baseUrl, "/settings?tab=keys")
    await page.waitForSelector("form[aria-label='New API key']")
    await page.type("form[aria-label='New API key'] input[name=name]", "Reporting")
    await clickText(page, "Create API key")
    const shown = await waitForText(page, "it is shown only once")
    const key = /sek_live_[0-9a-f]{32}/.exec(shown)?.[0]
    expect(key).toBeDefined()
    expect(shown).toContain("Copy")
    await screenshot(page, "settings-keys")
    // The key works, and once dismissed it is nowhere on the page: only its hint stays.
    expect((await call(dash.server, "GET", "/api/v1/sessions", { key: key! })).status).toBe(200)
    await clickText(page, "Done")
    const after = await visibleText(page)
    expect(after).not.toContain(key!)
    expect(after).toContain(`sek_live_…${key!.slice(-4)}`)
    for (const tab of ["users", "teams", "projects", "license", "org"]) {
      await goTo(page, dash.server.baseUrl, `/settings?tab=${tab}`)
      await page.waitForSelector("main form")
      // The tab's lists are fetched after its form shows: the screenshot waits for their answers.
      await page.waitForNetworkIdle({ idleTime: 100 })
      await screenshot(page, `settings-${tab}`)
    }
    expect(await visibleText(page)).toContain("Session timeout")
    // A new user, then a license key for them, shown once.
    await goTo(page, dash.server.baseUrl, "/settings?tab=users")
    await page.type("form[aria-label='New user'] input[name=name]", "Dana Scully")
    await page.type("form[aria-label='New user'] input[name=email]", "dana@example.com")
    await page.select("form[aria-label='New user'] select[name=role]", "viewer")
    await clickText(page, "Add")
    await waitForText(page, "dana@example.com")
    const users = await call(dash.server, "GET", "/api/v1/users?limit=100", { key: org.api_key_live! })
    expect((users.body.data as Array<{ email: string; role: string }>).find((u) => u.email === "dana@example.com")?.role).toBe("viewer")
    await goTo(page, dash.server.baseUrl, "/settings?tab=license")
    await page.waitForSelector("form[aria-label='New license key'] select option[value^='user_']")
    type Select = { readonly options: ArrayLike<{ readonly value: string; readonly text: string }> }
    const dana = await page.$eval(
      "form[aria-label='New license key'] select",
      (el) => Array.from((el as unknown as Select).options).find((o) => o.text.startsWith("Dana"))?.value
    )
    await page.select("form[aria-label='New license key'] select", dana!)
    await clickText(page, "Create license key")
    const licensed = await waitForText(page, "New license key for Dana Scully")
    expect(licensed).toMatch(/lic_[0-9a-f]{20}/)
    await screenshot(page, "settings-license")
    await goTo(page, dash.server.baseUrl, "/settings?tab=org")
    await page.waitForSelector("form[aria-label='Org settings']")
    // Org settings: the API's refusal is shown as it says it; a valid change is saved.
    const zone = "form[aria-label='Org settings'] input[name=time_zone]"
    await page.$eval(zone, (el) => ((el as unknown as { value: string }).value = ""))
    await page.type(zone, "Mars/Olympus")
    await clickText(page, "Save settings")
    await waitForText(page, "time_zone")
    await page.$eval(zone, (el) => ((el as unknown as { value: string }).value = ""))
    await page.type(zone, "Europe/Berlin")
    await page.$eval("form[aria-label='Org settings'] input[name=session_timeout]", (el) => ((el as unknown as { value: string }).value = "45"))
    await page.type("form[aria-label='Org settings'] input[name=drift_prompts]", "5")
    await clickText(page, "Save settings")
    await waitForText(page, "Saved.")
    expect((await call(dash.server, "GET", "/api/v1/org", { key: org.api_key_live! })).body).toMatchObject({
      time_zone: "Europe/Berlin",
      session_timeout: 2700,
      drift_prompts: 5
    })
    // Emptied, the org takes the deployment's number again.
    await page.$eval("form[aria-label='Org settings'] input[name=drift_prompts]", (el) => ((el as unknown as { value: string }).value = ""))
    await clickText(page, "Save settings")
    await waitFor(
      async () => (await call(dash.server, "GET", "/api/v1/org", { key: org.api_key_live! })).body,
      (b) => b.drift_prompts === null,
      { what: "the goal-drift streak back to the deployment's" }
    )
    expect(page.errors).toEqual([])
    await page.close()
  })

  it("sends a revoked key back to sign-in with a message", async () => {
    const org = await newOrg()
    const made = await call(dash.server, "POST", "/api/v1/api-keys", {
      key: org.api_key_live!,
      body: { name: "temp", scopes: ["admin:read", "sessions:read", "events:read", "rules:read"] }
    })
    const page = await openPage(dash.browser)
    await signIn(page, dash.server.baseUrl, made.body.key)
    await waitForText(page, "Spend today")
    expect((await call(dash.server, "DELETE", `/api/v1/api-keys/${made.body.id}`, { key: org.api_key_live! })).status).toBe(204)
    // The next page the user opens asks the API with the revoked key.
    await page.evaluate(() => {
      ;(globalThis as unknown as { location: { hash: string } }).location.hash = "#/sessions"
    })
    const text = await waitForText(page, "Your API key is no longer valid")
    expect(text).toContain("Sign in")
    expect(await page.$("nav.side")).toBeNull()
    await screenshot(page, "signed-out")
    await page.close()
  })

  it("shows a goal's drift, marked in the session's timeline, and renders at phone width", async () => {
    const org = await newOrg()
    const goal = await call(dash.server, "POST", "/engine/v1/goals", {
      key: org.license_key,
      body: { description: "Fix the login bug", adapter: "claude-code" }
    })
    expect(goal.status).toBe(201)
    await signal(org, sonnet, "post-tool", "drifting")
    for (const prompt of ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]) {
      await signal(org, { prompt }, "user-prompt", "drifting")
    }
    await waitFor(
      async () => (await call(dash.server, "GET", "/api/v1/events?type=goal-drift", { key: org.api_key_live! })).body.data,
      (events) => events.length === 1,
      { what: "the goal-drift signal" }
    )
    // The user answers it: the drift was the goal's work.
    await signal(org, { on_goal: true }, "refocus-ack", "drifting")
    const page = await openPage(dash.browser, 390, 844)
    await signIn(page, dash.server.baseUrl, org.api_key_live!)
    await waitForText(page, "Spend today")
    await screenshot(page, "phone-overview")
    // Nothing is wider than the screen: the page does not scroll sideways.
    expect(await layoutWidth(page)).toBeLessThanOrEqual(390)
    await goTo(page, dash.server.baseUrl, "/goals")
    await waitForText(page, "Fix the login bug")
    await waitForText(page, "drifted 1×")
    await screenshot(page, "phone-goals")
    await page.setViewport({ width: 1280, height: 900 })
    await screenshot(page, "goals")
    await goTo(page, dash.server.baseUrl, "/sessions")
    await (await page.waitForSelector("table a[href^='#/sessions/sess_']"))!.click()
    await waitForText(page, "goal-drift")
    // Which goal, and on what evidence: the off-goal prompts.
    const timeline = await waitForText(page, "Drifted from “Fix the login bug”")
    expect(timeline).toContain("goal drift")
    expect(timeline).toContain("3 off-goal prompts")
    for (const prompt of ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]) expect(timeline).toContain(prompt)
    await waitForText(page, "Drift answered: it was the goal's work")
    await screenshot(page, "session-drift")
    expect(await page.$$("li.signal.drift")).toHaveLength(1)
    expect(page.errors).toEqual([])
    await page.close()
  })
})
