import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { waitForText } from "../dashboard/browser.ts"
import {
  auditEntries,
  expectEnvelope,
  meOf,
  openTab,
  sessionCookieOf,
  signInAs,
  type SsoFixture,
  startSsoFixture,
  type Tab
} from "./sso-fixture.ts"
import { call } from "../../support/harness.ts"

/**
 * What signing in refuses, each with a plain page saying why, no session, and (where the org is
 * known) a failed sign-in in the audit log: a domain the org does not allow, ID tokens that are
 * tampered with, expired, from another issuer or for another client, and a provider's answer
 * used twice. And a session that outlives DASHBOARD_SESSION_TTL.
 */

let f: SsoFixture
let tab: Tab | undefined
const now = () => Math.floor(Date.now() / 1000)

beforeAll(async () => {
  f = await startSsoFixture({ DASHBOARD_SESSION_TTL: "3 seconds" })
  f.idp.accounts.set("ada", { email: "ada@acme.example.com", name: "Ada", groups: ["signal-admins"] })
  f.idp.accounts.set("eve", { email: "eve@elsewhere.example.org", name: "Eve", groups: ["signal-admins"] })
}, 120_000)
afterAll(() => f?.stop())
afterEach(async () => {
  f.idp.alterIdToken = undefined
  await tab?.context.close()
  tab = undefined
})

/** Signs in as `login` and expects the failure page with `reason`, no session, and the status. */
const expectRefused = async (login: string, reason: string, status = 403) => {
  tab = await openTab(f)
  await signInAs(f, tab, login)
  const text = await waitForText(tab.page, "Sign-in failed")
  expect(text).toContain(reason)
  expect(text).not.toMatch(/at .*\.ts:\d+/) // no stack
  expect(tab.callbacks.map((c) => c.status)).toEqual([status])
  expect(await sessionCookieOf(f, tab)).toBeUndefined()
}

const lastFailure = async () => (await auditEntries(f, "user.sign_in_failed"))[0]

describe("signing in refuses", () => {
  it("a person whose e-mail domain the org does not allow", async () => {
    await expectRefused("eve", "People with your e-mail domain may not sign in to this org.")
    expect(await lastFailure()).toMatchObject({
      actor: { type: "user", id: "email:eve@elsewhere.example.org" },
      after: { reason: "domain_not_allowed", email: "eve@elsewhere.example.org" }
    })
  })

  it("an ID token whose claims were changed after it was signed", async () => {
    f.idp.alterIdToken = async (token) => {
      const [header, payload, signature] = token.split(".")
      const claims = JSON.parse(Buffer.from(payload!, "base64url").toString("utf8")) as Record<string, unknown>
      const forged = Buffer.from(JSON.stringify({ ...claims, groups: ["signal-admins", "everyone"] })).toString("base64url")
      return [header, forged, signature].join(".")
    }
    await expectRefused("ada", "could not be verified")
    const entry = await lastFailure()
    expect(entry?.after).toMatchObject({ reason: "id_token_rejected" })
    expect(String(entry?.after?.detail)).toMatch(/signature/)
    // The entry says why, never what the token was.
    expect(JSON.stringify(entry)).not.toMatch(/eyJ[\w-]+\.[\w-]+\./)
  })

  it("an expired ID token, signed by the provider's own key", async () => {
    f.idp.alterIdToken = (token) => f.idp.resign(token, (c) => ({ ...c, iat: now() - 7200, exp: now() - 3600 }))
    await expectRefused("ada", "could not be verified")
    expect(String((await lastFailure())?.after?.detail)).toMatch(/exp/)
  })

  it("an ID token of another issuer", async () => {
    f.idp.alterIdToken = (token) => f.idp.resign(token, (c) => ({ ...c, iss: "http://127.0.0.1:9/another-provider" }))
    await expectRefused("ada", "could not be verified")
    expect(String((await lastFailure())?.after?.detail)).toMatch(/iss/)
  })

  it("an ID token for another client (audience)", async () => {
    f.idp.alterIdToken = (token) => f.idp.resign(token, (c) => ({ ...c, aud: "another-client", azp: "another-client" }))
    await expectRefused("ada", "could not be verified")
    expect(String((await lastFailure())?.after?.detail)).toMatch(/aud/)
  })

  it("but takes a token the provider's key signed with its claims as they were (the checks above are the claims')", async () => {
    f.idp.alterIdToken = (token) => f.idp.resign(token, (c) => c)
    tab = await openTab(f)
    await signInAs(f, tab, "ada")
    expect((await meOf(tab)).body.user.email).toBe("ada@acme.example.com")
  })

  it("the provider's answer used a second time, in the same browser or with its state cookie", async () => {
    tab = await openTab(f)
    await signInAs(f, tab, "ada")
    expect((await meOf(tab)).status).toBe(200)
    const answer = tab.callbacks[0]!.url
    const state = new URL(answer).searchParams.get("state")!
    await tab.page.goto(answer)
    expect(await waitForText(tab.page, "Sign-in failed")).toContain("not started in this browser, or it is over already")
    const replayed = await fetch(answer, { headers: { cookie: `se_sso_state=${state}` }, redirect: "manual" })
    expect(replayed.status).toBe(400)
    expect(replayed.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await replayed.text()).toContain("expired or was used already")
    expect(replayed.headers.get("set-cookie") ?? "").not.toMatch(/se_session=[^;]/)
  })

  it("a session past DASHBOARD_SESSION_TTL: the API answers 401 session_expired", async () => {
    tab = await openTab(f)
    await signInAs(f, tab, "ada")
    const me = await meOf(tab)
    expect(me.status).toBe(200)
    const lifetime = Date.parse(me.body.expires_at) - Date.now()
    expect(lifetime).toBeGreaterThan(0)
    expect(lifetime).toBeLessThanOrEqual(3000)
    const cookie = (await sessionCookieOf(f, tab))!
    // Waits for the expiry the session itself names, then asks again.
    for (;;) {
      const res = await call(f.server, "GET", "/api/v1/org", { headers: { cookie } })
      if (res.status !== 200) {
        expectEnvelope(res, 401, "session_expired")
        break
      }
      expect(Date.now()).toBeLessThan(Date.parse(me.body.expires_at) + 10_000)
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(me.body.expires_at) - 1000)
  })
})

describe("starting a sign-in", () => {
  it("for an org of no such name is a plain page, not a stack", async () => {
    tab = await openTab(f)
    const res = await tab.page.goto(`${f.server.baseUrl}/dashboard/sso/login?org=nobody-has-this-name`)
    expect(res?.status()).toBe(404)
    expect(await waitForText(tab.page, "Sign-in failed")).toContain("No organization named")
  })

  it("shows what was typed as text, never as markup", async () => {
    const res = await fetch(`${f.server.baseUrl}/dashboard/sso/login?org=${encodeURIComponent("<script>alert(1)</script>")}`)
    expect(res.status).toBe(404)
    const body = await res.text()
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(body).not.toContain("<script>")
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'")
  })
})
