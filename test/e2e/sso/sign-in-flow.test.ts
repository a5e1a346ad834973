import type { Browser, Page } from "puppeteer-core"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer } from "../../support/harness.ts"
import { launchBrowser, openPage, visibleText, waitForText } from "../dashboard/browser.ts"
import { type IdentityProvider, startIdentityProvider } from "./identity-provider.ts"

/**
 * Signing in to the dashboard with the org's identity provider, in Chromium, against a real
 * OpenID provider on loopback: the session it makes, who it makes it for (match, creation, group
 * → role mapping), what it refuses (domain, tampered, expired, foreign tokens, a replayed answer),
 * sign-out, expiry and CSRF.
 */

let server: TestServer
let idp: IdentityProvider
let org: Bootstrapped
let browser: Browser
let page: Page & { errors: Array<string> }

const admin = () => org.api_key_live!
const callbackUri = () => `${server.baseUrl}/dashboard/sso/callback`

const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: res.headers.get("x-request-id") })
}

const auditEntries = async (action: string) => {
  const res = await call(server, "GET", `/api/v1/audit-log?limit=100&action=${action}`, { key: admin() })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return (res.body as { data: Array<{ action: string; actor: { id: string }; resource_id: string | null; after: Record<string, unknown> | null }> }).data
    .filter((e) => e.action === action)
}

beforeAll(async () => {
  server = await startServer({ env: { DASHBOARD_SESSION_TTL: "1 hour" } })
  org = await bootstrapOrg(server.databaseUrl, "acme", "team")
  idp = await startIdentityProvider(callbackUri())
  const made = await call(server, "POST", "/api/v1/users", { key: admin(), body: { email: "ada@acme.example.com", name: "Ada", role: "member" } })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  const put = await call(server, "PUT", "/api/v1/sso", {
    key: admin(),
    body: {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      allowed_email_domains: ["acme.example.com"],
      groups_claim: "groups",
      group_roles: [{ group: "signal-admins", role: "admin" }, { group: "engineering", role: "member" }],
      create_users: true
    }
  })
  expect(put.status, JSON.stringify(put.body)).toBe(200)
  browser = await launchBrowser()
}, 120_000)
afterAll(async () => {
  await browser?.close()
  await idp?.stop()
  await server?.stop()
})
beforeEach(async () => {
  idp.alterIdToken = undefined
  if (page) await page.close()
  const context = await browser.createBrowserContext()
  page = Object.assign(await context.newPage(), { errors: [] as Array<string> })
  page.setDefaultTimeout(15_000)
})

/** Starts signing in on the service and signs in on the provider's own login page as `login`. */
const signInAt = async (login: string) => {
  await page.goto(`${server.baseUrl}/dashboard/sso/login?org=acme`)
  await page.waitForSelector("input[name=login]")
  await page.type("input[name=login]", login)
  await page.type("input[name=password]", "any password")
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.click("button[type=submit]")])
  // The provider's answer may pass through its own redirects first: wait for the service's page.
  await page.waitForFunction((base: string) => (globalThis as unknown as { location: { href: string } }).location.href.startsWith(base), {}, server.baseUrl)
}

/** The session the browser holds, as the service's `/dashboard/sso/me` answers it to the page. */
const me = () =>
  page.evaluate(async () => {
    const res = await fetch("/dashboard/sso/me")
    return { status: res.status, body: await res.json() }
  }) as Promise<{ status: number; body: { user: { id: string; email: string; role: string }; csrf_token: string } }>

describe("signing in with the org's identity provider", () => {
  it("signs a known person in as their user, with a session cookie, and records it", async () => {
    idp.accounts.set("ada", { email: "ada@acme.example.com", name: "Ada Lovelace", groups: ["engineering"] })
    await signInAt("ada")
    const who = await me()
    expect(who.status, JSON.stringify(who.body)).toBe(200)
    expect(who.body).toMatchObject({ user: { email: "ada@acme.example.com", role: "member" }, org: { id: org.org_id, name: "acme" } })
    const cookies = await page.cookies(server.baseUrl)
    const session = cookies.find((c) => c.name === "se_session")
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" })
    const entries = await auditEntries("user.sign_in")
    expect(entries.some((e) => e.actor.id === who.body.user.id)).toBe(true)
  })
})
