import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { call } from "../../support/harness.ts"
import { clickText, waitForText } from "../dashboard/browser.ts"
import {
  auditEntries,
  expectEnvelope,
  loginAtProvider,
  meOf,
  openTab,
  sessionCookieOf,
  signInAs,
  type SsoFixture,
  startSsoFixture,
  type Tab,
  usersByEmail
} from "./sso-fixture.ts"

/**
 * Signing in to the dashboard with the org's identity provider, in Chromium, against a real
 * OpenID provider on loopback: the dashboard as the person, who the session is for (match,
 * creation, group → role mapping), sign-out and CSRF. Refusals: sign-in-refusals.test.ts.
 */

let f: SsoFixture
let tab: Tab | undefined

beforeAll(async () => {
  f = await startSsoFixture({ DASHBOARD_SESSION_TTL: "1 hour" })
  const made = await call(f.server, "POST", "/api/v1/users", {
    key: f.org.api_key_live!,
    body: { email: "ada@acme.example.com", name: "Ada", role: "member" }
  })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
}, 120_000)
afterAll(() => f?.stop())
afterEach(async () => {
  expect(tab?.errors ?? []).toEqual([])
  await tab?.context.close()
  tab = undefined
})

describe("signing in to the dashboard with the org's identity provider", () => {
  it("from the sign-in page: the dashboard shows the org as the person, whose admin group made them admin", async () => {
    f.idp.accounts.set("ada", { email: "Ada@acme.example.com", name: "Ada Lovelace", groups: ["engineering", "signal-admins"] })
    tab = await openTab(f)
    await tab.page.goto(`${f.server.baseUrl}/`)
    await tab.page.waitForSelector("input[name=org]")
    await tab.page.type("input[name=org]", "ACME")
    // acme takes no pasted key once SSO is set up: the page stops offering it.
    await waitForText(tab.page, "signs in with single sign-on only")
    expect(await tab.page.$("input[name=key]")).toBeNull()
    await clickText(tab.page, "Sign in with SSO")
    await loginAtProvider(f, tab, "ada")
    await waitForText(tab.page, "Spend today")
    // Her user keeps the name it was given; the header names her beside the org.
    await waitForText(tab.page, "acme · team · Ada")
    expect(tab.callbacks.map((c) => c.status)).toEqual([303])

    const cookie = (await tab.context.cookies()).find((c) => c.name === "se_session")
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" })
    const me = await meOf(tab)
    expect(me.body).toMatchObject({ user: { email: "ada@acme.example.com", role: "admin" }, org: { id: f.org.org_id, name: "acme" } })
    // The first group of the mapping that she is in decides: signal-admins comes before engineering.
    expect((await usersByEmail(f)).get("ada@acme.example.com")?.role).toBe("admin")
    const change = (await auditEntries(f, "user.role_change")).find((e) => e.resource_id === me.body.user.id)
    expect(change?.before).toMatchObject({ role: "member" })
    expect(change?.after).toMatchObject({ role: "admin", groups: ["engineering", "signal-admins"] })
    const signIn = (await auditEntries(f, "user.sign_in")).find((e) => e.actor.id === me.body.user.id)
    expect(signIn).toMatchObject({ actor: { type: "user" }, after: { email: "Ada@acme.example.com", role: "admin" } })
  })

  it("a change made from the dashboard is the person's, and sign-out ends the session", async () => {
    f.idp.accounts.set("ada", { email: "ada@acme.example.com", name: "Ada Lovelace", groups: ["signal-admins"] })
    tab = await openTab(f)
    await signInAs(f, tab, "ada")
    await waitForText(tab.page, "Spend today")
    const me = await meOf(tab)
    // The dashboard's own request (api.js) sends the cookie and the CSRF token.
    // (A string, so that the test runner leaves the page's own import alone.)
    const created = await tab.page.evaluate(
      `import("/app/api.js").then(({ api }) => api("POST", "/teams", { body: { name: "made-in-the-browser" } }))`
    ) as { id: string }
    const teamEntry = (await auditEntries(f, "team.create")).find((e) => e.resource_id === created.id)
    expect(teamEntry?.actor).toEqual({ type: "user", id: me.body.user.id })

    const cookie = (await sessionCookieOf(f, tab))!
    const loggedOut = tab.page.waitForResponse((r) => r.url() === `${f.server.baseUrl}/dashboard/sso/logout`)
    await clickText(tab.page, "Sign out")
    await waitForText(tab.page, "You signed out.")
    expect((await loggedOut).status()).toBe(204)
    expect(await sessionCookieOf(f, tab)).toBeUndefined()
    expect((await meOf(tab)).status).toBe(401)
    expectEnvelope(await call(f.server, "GET", "/api/v1/org", { headers: { cookie } }), 401, "session_expired")
    expect((await auditEntries(f, "user.sign_out")).some((e) => e.actor.id === me.body.user.id)).toBe(true)
  })

  it("a first sign-in creates the user (create_users); someone in no mapped group keeps the role they have", async () => {
    f.idp.accounts.set("bo", { email: "bo@acme.example.com", name: "Bo", groups: ["engineering"] })
    tab = await openTab(f)
    await signInAs(f, tab, "bo")
    const me = await meOf(tab)
    expect(me.status).toBe(200)
    expect(me.body.user).toMatchObject({ email: "bo@acme.example.com", name: "Bo", role: "member" })
    expect((await usersByEmail(f)).get("bo@acme.example.com")).toMatchObject({ id: me.body.user.id, role: "member" })
    expect((await auditEntries(f, "user.create")).some((e) => e.resource_id === me.body.user.id)).toBe(true)
    await tab.context.close()

    const made = await call(f.server, "POST", "/api/v1/users", {
      key: f.org.api_key_live!,
      body: { email: "cy@acme.example.com", name: "Cy", role: "admin" }
    })
    expect(made.status).toBe(201)
    f.idp.accounts.set("cy", { email: "cy@acme.example.com", name: "Cy", groups: ["marketing"] })
    tab = await openTab(f)
    await signInAs(f, tab, "cy")
    expect((await meOf(tab)).body.user.role).toBe("admin")
    // Signing in again in the same browser ends the session it held.
    const before = (await sessionCookieOf(f, tab))!
    // (The provider remembers her: it answers at once, without its login page.)
    await tab.page.goto(`${f.server.baseUrl}/dashboard/sso/login?org=acme`)
    await waitForText(tab.page, "Spend today")
    expect(await sessionCookieOf(f, tab)).not.toBe(before)
    expectEnvelope(await call(f.server, "GET", "/api/v1/org", { headers: { cookie: before } }), 401, "session_expired")
  })

  it("refuses a change made with the session cookie but without its CSRF token (403 envelope)", async () => {
    f.idp.accounts.set("ada", { email: "ada@acme.example.com", name: "Ada Lovelace", groups: ["signal-admins"] })
    tab = await openTab(f)
    await signInAs(f, tab, "ada")
    const cookie = (await sessionCookieOf(f, tab))!
    const { csrf_token } = (await meOf(tab)).body
    expectEnvelope(await call(f.server, "POST", "/api/v1/teams", { headers: { cookie }, body: { name: "no-token" } }), 403, "csrf_token_invalid")
    expectEnvelope(await call(f.server, "POST", "/dashboard/sso/logout", { headers: { cookie } }), 403, "csrf_token_invalid")
    // Neither went through: the session lives, and with the token the same change is made.
    expect((await call(f.server, "GET", "/api/v1/org", { headers: { cookie } })).status).toBe(200)
    const made = await call(f.server, "POST", "/api/v1/teams", { headers: { cookie, "x-csrf-token": csrf_token }, body: { name: "with-token" } })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
  })

  it("tells the sign-in page only whether an org uses SSO and takes keys; the dashboard refuses acme's pasted key", async () => {
    const ask = async (ref: string) => (await call(f.server, "GET", `/dashboard/sso/org?org=${encodeURIComponent(ref)}`)).body
    expect(await ask("acme")).toEqual({ sso: true, api_key_sign_in: false })
    expect(await ask(f.org.org_id)).toEqual({ sso: true, api_key_sign_in: false })
    // An org that does not exist looks like one without SSO.
    expect(await ask("no-such-org")).toEqual({ sso: false, api_key_sign_in: true })
    tab = await openTab(f)
    await tab.page.goto(`${f.server.baseUrl}/`)
    await tab.page.waitForSelector("input[name=key]")
    await tab.page.type("input[name=key]", f.org.api_key_live!)
    await tab.page.keyboard.press("Enter")
    await waitForText(tab.page, "pasting an API key into the dashboard is turned off")
    expect(await tab.page.$("nav.side")).toBeNull()
    // The key itself still works for programs.
    expect((await call(f.server, "GET", "/api/v1/org", { key: f.org.api_key_live! })).status).toBe(200)
  })
})
