import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { call } from "../../support/harness.ts"
import { goTo, waitForText } from "../dashboard/browser.ts"
import { meOf, openTab, signInAs, type SsoFixture, startSsoFixture, type Tab } from "./sso-fixture.ts"

/**
 * The dashboard as each role sees it, signed in with the org's identity provider in Chromium: the
 * pages and controls a person is offered are the ones their role may use (src/domain/roles.ts),
 * and what they are not offered says so instead of failing.
 */

let f: SsoFixture
let tab: Tab | undefined
let memberSession: string

const person = async (login: string, role: string, teamIds: Array<string> = []) => {
  const made = await call(f.server, "POST", "/api/v1/users", {
    key: f.org.api_key_live!,
    body: { email: `${login}@acme.example.com`, name: login, role, team_ids: teamIds }
  })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  // In no mapped group: sign-in keeps the role set here.
  f.idp.accounts.set(login, { email: `${login}@acme.example.com`, name: login, groups: ["contractors"] })
  return made.body.id as string
}

/** A new browser context signed in as `login`, on the Overview. */
const signedIn = async (login: string) => {
  const opened = await openTab(f)
  await signInAs(f, opened, login)
  await waitForText(opened.page, "Spend today")
  return opened
}

const navLinks = (t: Tab) => t.page.$$eval("nav.side a", (links) => links.map((a) => a.textContent))
const buttons = (t: Tab) => t.page.$$eval("main button", (found) => found.map((b) => b.textContent?.trim()))

beforeAll(async () => {
  f = await startSsoFixture()
  const live = f.org.api_key_live!
  const team = (await call(f.server, "POST", "/api/v1/teams", { key: live, body: { name: "Platform" } })).body.id as string
  const mia = await person("mia", "member", [team])
  await person("vic", "viewer")
  const lee = await person("lee", "team_lead", [team])
  expect((await call(f.server, "PATCH", `/api/v1/teams/${team}`, { key: live, body: { lead_ids: [lee] } })).status).toBe(200)
  const license = await call(f.server, "POST", "/api/v1/license-keys", { key: live, body: { user_id: mia } })
  memberSession = `mia-${Date.now()}`
  const sent = await call(f.server, "POST", "/engine/v1/signals", {
    key: license.body.key,
    body: { type: "post-tool", adapter: "cursor", session_id: memberSession, metadata: { model: "claude-sonnet-4", tokens_in: 10, tokens_out: 1 } }
  })
  expect(sent.status, JSON.stringify(sent.body)).toBe(200)
}, 120_000)
afterAll(() => f?.stop())
afterEach(async () => {
  expect(tab?.errors ?? []).toEqual([])
  await tab?.context.close()
  tab = undefined
})

describe("the dashboard by role", () => {
  it("a member is offered their own activity only, and a page of another role says so", async () => {
    tab = await signedIn("mia")
    expect(await navLinks(tab)).toEqual(["Overview", "Sessions", "Events", "Goals", "Productivity", "Coverage"])
    expect(await tab.page.evaluate(() => document.body.innerText)).not.toContain("Budgets and limits")
    // /dashboard/sso/me says what the role may call; the page offers just that.
    const me = (await meOf(tab)).body as unknown as { operations: Array<string> }
    expect(me.operations).toContain("sessions.list")
    expect(me.operations).not.toContain("rules.list")

    await goTo(tab.page, f.server.baseUrl, "/sessions")
    await waitForText(tab.page, "claude-sonnet-4")
    await goTo(tab.page, f.server.baseUrl, "/rules")
    await waitForText(tab.page, "Your role (member) does not give access to this page.")
  })

  it("a viewer reads the org's setup without a control that changes it", async () => {
    tab = await signedIn("vic")
    expect(await navLinks(tab)).toEqual([
      "Overview",
      "Sessions",
      "Events",
      "Alerts",
      "Rules",
      "Webhooks",
      "Channels",
      "Goals",
      "Audit log",
      "Productivity",
      "Coverage",
      "Settings"
    ])
    await goTo(tab.page, f.server.baseUrl, "/rules")
    await waitForText(tab.page, "Rules")
    expect(await buttons(tab)).not.toContain("New rule")
    await goTo(tab.page, f.server.baseUrl, "/webhooks")
    await waitForText(tab.page, "No webhooks yet")
    expect(await buttons(tab)).not.toContain("New webhook")

    // Settings: people, teams and projects to read; no keys, no org settings, no form.
    await goTo(tab.page, f.server.baseUrl, "/settings")
    await waitForText(tab.page, "Platform")
    expect(await tab.page.$$eval("nav.tabs a", (links) => links.map((a) => a.textContent))).toEqual(["Users", "Teams", "Projects"])
    expect(await tab.page.$("form[aria-label='New user']")).toBeNull()
    expect(await buttons(tab)).not.toContain("Deactivate")
    await goTo(tab.page, f.server.baseUrl, "/settings?tab=keys")
    await waitForText(tab.page, "mia@acme.example.com")
  })

  it("a team lead is offered their teams' activity and the budget rules they may make", async () => {
    tab = await signedIn("lee")
    expect(await navLinks(tab)).toEqual(["Overview", "Sessions", "Events", "Rules", "Goals", "Productivity", "Coverage"])
    await waitForText(tab.page, "Budgets and limits")
    await goTo(tab.page, f.server.baseUrl, "/rules")
    await waitForText(tab.page, "New rule")
    // Their team member's session is theirs to see.
    await goTo(tab.page, f.server.baseUrl, "/sessions")
    await waitForText(tab.page, "claude-sonnet-4")
  })
})

declare const document: { readonly body: { readonly innerText: string } }
