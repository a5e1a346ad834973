import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer } from "../../support/harness.ts"

let server: TestServer
let org: Bootstrapped
let other: Bootstrapped

beforeAll(async () => {
  server = await startServer({ env: { PUBLIC_BASE_URL: "https://signals.example.com/" } })
  org = await bootstrapOrg(server.databaseUrl, "sso", "team")
  other = await bootstrapOrg(server.databaseUrl, "sso-bystander", "team")
})
afterAll(() => server?.stop())

const secret = "idp-client-secret-7f3a9c0e5b1d"
const settings = {
  issuer: "https://login.example.com/oauth2/default",
  client_id: "0oa1signalengine",
  client_secret: secret,
  allowed_email_domains: ["Example.com", "corp.example.com"],
  groups_claim: "groups"
}
const put = (body: unknown, key = org.api_key_live!) => call(server, "PUT", "/api/v1/sso", { key, body })
const get = (key = org.api_key_live!) => call(server, "GET", "/api/v1/sso", { key })

const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: res.headers.get("x-request-id") })
}

describe("/api/v1/sso", () => {
  it("is 404 until set", async () => {
    expectEnvelope(await get(), 404, "not_found")
  })

  it("PUT stores the settings and answers them with the redirect URI, never the secret", async () => {
    const res = await put(settings)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({
      issuer: settings.issuer,
      client_id: settings.client_id,
      client_secret_set: true,
      allowed_email_domains: ["example.com", "corp.example.com"],
      groups_claim: "groups",
      group_roles: [],
      create_users: false,
      allow_api_key_sign_in: false,
      redirect_uri: "https://signals.example.com/dashboard/sso/callback",
      updated_at: expect.any(String)
    })
    expect(JSON.stringify(res.body)).not.toContain(secret)
    expect((await get()).body).toEqual(res.body)
  })

  it("keeps the client secret encrypted in the database", async () => {
    const client = new pg.Client({ connectionString: server.databaseUrl })
    await client.connect()
    try {
      const { rows } = await client.query("SELECT client_secret_ciphertext FROM org_sso WHERE org_id = $1", [org.org_id])
      expect(rows).toHaveLength(1)
      expect(rows[0].client_secret_ciphertext).toMatch(/^v1\./)
      expect(rows[0].client_secret_ciphertext).not.toContain(secret)
    } finally {
      await client.end()
    }
  })

  it("records the change in the audit log with the secret redacted", async () => {
    const res = await call(server, "GET", "/api/v1/audit-log?resource_type=sso", { key: org.api_key_live! })
    expect(res.status).toBe(200)
    const entry = res.body.data.find((e: { action: string }) => e.action === "sso.update")
    expect(entry).toMatchObject({ resource_id: org.org_id, before: null, after: { client_secret_ciphertext: "[redacted]" } })
    expect(JSON.stringify(res.body)).not.toContain(secret)
  })

  it("is per org: another org sees none", async () => {
    expectEnvelope(await get(other.api_key_live!), 404, "not_found")
  })

  it("refuses an issuer over plain http off loopback, and a malformed domain (422)", async () => {
    expectEnvelope(await put({ ...settings, issuer: "http://login.example.com" }), 422, "validation_error")
    expectEnvelope(await put({ ...settings, allowed_email_domains: ["not a domain"] }), 422, "validation_error")
    expectEnvelope(await put({ ...settings, allowed_email_domains: [] }), 422, "validation_error")
    expect((await put({ ...settings, issuer: "http://127.0.0.1:9999" })).status).toBe(200)
  })

  it("keeps the group → role mapping in its order; refuses an unknown role (400) and a mapping without groups_claim (422)", async () => {
    const group_roles = [{ group: "idp-admins", role: "admin" }, { group: "idp-engineers", role: "member" }]
    const res = await put({ ...settings, group_roles })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect((await get()).body.group_roles).toEqual(group_roles)
    expectEnvelope(await put({ ...settings, group_roles: [{ group: "g", role: "overlord" }] }), 400, "invalid_parameters")
    expectEnvelope(await put({ ...settings, groups_claim: null, group_roles }), 422, "validation_error")
    expect((await get()).body.group_roles).toEqual(group_roles)
  })

  it("refuses a missing secret and unknown fields (400)", async () => {
    const { client_secret: _, ...noSecret } = settings
    expectEnvelope(await put(noSecret), 400, "invalid_parameters")
    expectEnvelope(await put({ ...settings, client_secrett: "x" }), 400, "invalid_parameters")
  })

  it("needs an admin key: a key without admin scope is 403", async () => {
    const created = await call(server, "POST", "/api/v1/api-keys", {
      key: org.api_key_live!,
      body: { name: "reader", scopes: ["events:read"] }
    })
    expect(created.status).toBe(201)
    const res = await put(settings, created.body.key)
    expect(res.status).toBe(403)
    expect((await get(created.body.key)).status).toBe(403)
  })

  it("DELETE removes them; a second DELETE is 404", async () => {
    expect((await call(server, "DELETE", "/api/v1/sso", { key: org.api_key_live! })).status).toBe(204)
    expectEnvelope(await get(), 404, "not_found")
    expectEnvelope(await call(server, "DELETE", "/api/v1/sso", { key: org.api_key_live! }), 404, "not_found")
  })
})
