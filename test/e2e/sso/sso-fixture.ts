import type { Browser, BrowserContext, Page } from "puppeteer-core"
import { expect } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer } from "../../support/harness.ts"
import { launchBrowser } from "../dashboard/browser.ts"
import { type IdentityProvider, startIdentityProvider } from "./identity-provider.ts"

/**
 * The sign-in tests' world: the service, an org ("acme") with SSO set up against a real OpenID
 * provider on loopback, and Chromium. Each test signs in from a fresh browser context, so
 * neither the service's nor the provider's cookies carry over.
 */
export interface SsoFixture {
  readonly server: TestServer
  readonly idp: IdentityProvider
  readonly org: Bootstrapped
  readonly browser: Browser
  readonly stop: () => Promise<void>
}

export const groupRoles = [{ group: "signal-admins", role: "admin" }, { group: "engineering", role: "member" }] as const

export const startSsoFixture = async (env: Record<string, string> = {}): Promise<SsoFixture> => {
  const server = await startServer({ env })
  const org = await bootstrapOrg(server.databaseUrl, "acme", "team")
  const idp = await startIdentityProvider(`${server.baseUrl}/dashboard/sso/callback`)
  const put = await call(server, "PUT", "/api/v1/sso", {
    key: org.api_key_live!,
    body: {
      issuer: idp.issuer,
      client_id: idp.clientId,
      client_secret: idp.clientSecret,
      allowed_email_domains: ["acme.example.com"],
      groups_claim: "groups",
      group_roles: groupRoles,
      create_users: true
    }
  })
  expect(put.status, JSON.stringify(put.body)).toBe(200)
  const browser = await launchBrowser()
  return {
    server,
    idp,
    org,
    browser,
    stop: async () => {
      await browser.close()
      await idp.stop()
      await server.stop()
    }
  }
}

/** A tab in a browser context of its own, noting the page errors and the answers of the callback. */
export interface Tab {
  readonly page: Page
  readonly context: BrowserContext
  readonly errors: Array<string>
  /** Every request to the service's callback: its URL and its status. */
  readonly callbacks: Array<{ readonly url: string; readonly status: number }>
}

export const openTab = async (f: SsoFixture): Promise<Tab> => {
  const context = await f.browser.createBrowserContext()
  const page = await context.newPage()
  page.setDefaultTimeout(15_000)
  await page.setViewport({ width: 1280, height: 900 })
  const tab: Tab = { page, context, errors: [], callbacks: [] }
  page.on("pageerror", (e) => tab.errors.push(String((e as Error).message ?? e)))
  page.on("response", (r) => {
    if (r.url().startsWith(`${f.server.baseUrl}/dashboard/sso/callback`)) tab.callbacks.push({ url: r.url(), status: r.status() })
  })
  return tab
}

const href = (page: Page) => page.evaluate(() => (globalThis as unknown as { location: { href: string } }).location.href)

/**
 * Signs in on the provider's login page (the browser must be on it) as `login`, and waits until
 * the browser is back on the service.
 */
export const loginAtProvider = async (f: SsoFixture, tab: Tab, login: string): Promise<void> => {
  await tab.page.waitForSelector("input[name=login]")
  await tab.page.type("input[name=login]", login)
  await tab.page.type("input[name=password]", "any password")
  await tab.page.click("button[type=submit]")
  await tab.page.waitForFunction(
    (base: string) => (globalThis as unknown as { location: { href: string } }).location.href.startsWith(base),
    {},
    f.server.baseUrl
  )
  expect(await href(tab.page)).toMatch(new RegExp(`^${f.server.baseUrl}/`))
}

/** Starts signing in at the service's login URL for acme, then signs in at the provider as `login`. */
export const signInAs = async (f: SsoFixture, tab: Tab, login: string): Promise<void> => {
  await tab.page.goto(`${f.server.baseUrl}/dashboard/sso/login?org=acme`)
  await loginAtProvider(f, tab, login)
}

/** The browser's dashboard session cookie, as a Cookie header, if it has one. */
export const sessionCookieOf = async (f: SsoFixture, tab: Tab): Promise<string | undefined> => {
  const cookie = (await tab.context.cookies()).find((c) => c.name === "se_session" && f.server.baseUrl.includes(c.domain))
  return cookie === undefined ? undefined : `se_session=${cookie.value}`
}

export interface Me {
  readonly user: { readonly id: string; readonly email: string; readonly name: string; readonly role: string }
  readonly org: { readonly id: string; readonly name: string }
  readonly csrf_token: string
  readonly expires_at: string
}

/** What `/dashboard/sso/me` answers the page (its session and CSRF token). */
export const meOf = (tab: Tab): Promise<{ readonly status: number; readonly body: Me }> =>
  tab.page.evaluate(async () => {
    const res = await fetch("/dashboard/sso/me")
    return { status: res.status, body: await res.json() }
  }) as Promise<{ status: number; body: Me }>

export const expectEnvelope = (res: JsonResponse, status: number, code: string): void => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: res.headers.get("x-request-id") })
}

export interface Entry {
  readonly action: string
  readonly actor: { readonly type: string; readonly id: string }
  readonly resource_id: string | null
  readonly before: Record<string, unknown> | null
  readonly after: Record<string, unknown> | null
}

/** The org's audit entries of one action, newest first. */
export const auditEntries = async (f: SsoFixture, action: string): Promise<ReadonlyArray<Entry>> => {
  const res = await call(f.server, "GET", `/api/v1/audit-log?limit=100&action=${action}`, { key: f.org.api_key_live! })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return (res.body as { data: Array<Entry> }).data
}

/** The org's users by e-mail. */
export const usersByEmail = async (f: SsoFixture): Promise<Map<string, { id: string; role: string }>> => {
  const res = await call(f.server, "GET", "/api/v1/users?limit=100", { key: f.org.api_key_live! })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return new Map((res.body as { data: Array<{ id: string; email: string; role: string }> }).data.map((u) => [u.email, u]))
}
