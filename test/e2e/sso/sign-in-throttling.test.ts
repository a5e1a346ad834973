import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../../support/harness.ts"
import { expectEnvelope } from "./sso-fixture.ts"

/**
 * The sign-in's public routes (starting a sign-in, asking whether an org uses SSO) are counted
 * against the caller's address, so names cannot be tried without end; and an identity provider
 * that cannot be reached is a plain page saying so.
 */

let server: TestServer
let org: Bootstrapped

beforeAll(async () => {
  server = await startServer({ env: { MANAGEMENT_ANONYMOUS_RATE_LIMIT: "3" } })
  org = await bootstrapOrg(server.databaseUrl, "unreachable", "team")
  const put = await call(server, "PUT", "/api/v1/sso", {
    key: org.api_key_live!,
    // Nothing listens on the discard port.
    body: { issuer: "http://127.0.0.1:9", client_id: "c", client_secret: "s", allowed_email_domains: ["example.com"] }
  })
  expect(put.status, JSON.stringify(put.body)).toBe(200)
})
afterAll(() => server?.stop())

describe("the sign-in's public routes", () => {
  it("say so on a plain page when the provider cannot be reached, and throttle each address", async () => {
    const login = await fetch(`${server.baseUrl}/dashboard/sso/login?org=unreachable`, { redirect: "manual" })
    expect(login.status).toBe(502)
    expect(login.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await login.text()).toContain("The identity provider could not be reached.")

    expect((await call(server, "GET", "/dashboard/sso/org?org=unreachable")).body).toEqual({ sso: true, api_key_sign_in: false })
    expect((await call(server, "GET", "/dashboard/sso/org?org=guess-1")).status).toBe(200)
    const refused = await call(server, "GET", "/dashboard/sso/org?org=guess-2")
    expectEnvelope(refused, 429, "rate_limited")
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    const throttledLogin = await fetch(`${server.baseUrl}/dashboard/sso/login?org=unreachable`, { redirect: "manual" })
    expect(throttledLogin.status).toBe(429)
    expect(await throttledLogin.text()).toContain("Too many sign-ins from this address")
    // The management API's keys are not this bucket's.
    expect((await call(server, "GET", "/api/v1/org", { key: org.api_key_live! })).status).toBe(200)
  })
})
