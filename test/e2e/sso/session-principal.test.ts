import { createHash, randomBytes } from "node:crypto"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer } from "../../support/harness.ts"

/**
 * The management API with a signed-in person's dashboard session instead of a key: the cookie
 * is the credential, reads need nothing more, changes need the session's CSRF token, the role
 * decides what is allowed, and audit entries name the person.
 */

let server: TestServer
let org: Bootstrapped
let db: pg.Client
let adminId: string

beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "people", "team")
  db = new pg.Client({ connectionString: server.databaseUrl })
  await db.connect()
  const admin = await call(server, "POST", "/api/v1/users", {
    key: org.api_key_live!,
    body: { email: "ada@people.example.com", name: "Ada", role: "admin" }
  })
  expect(admin.status, JSON.stringify(admin.body)).toBe(201)
  adminId = (admin.body as { id: string }).id
})
afterAll(async () => {
  await db?.end()
  await server?.stop()
})

/** A session as sign-in makes one (the database keeps only the id's hash). */
const sessionFor = async (userId: string, expiresInSeconds = 3600) => {
  const id = randomBytes(32).toString("base64url")
  const csrf = randomBytes(32).toString("base64url")
  await db.query(
    `INSERT INTO dashboard_sessions (id_hash, org_id, user_id, csrf_token, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [createHash("sha256").update(id).digest("base64url"), org.org_id, userId, csrf, expiresInSeconds]
  )
  return { cookie: `se_session=${id}`, csrf }
}

const rule = (name: string) => ({
  name,
  type: "model_filter",
  scope: "org",
  scope_id: org.org_id,
  condition: { model: { in: ["o3"] } },
  action: "warn"
})

const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: res.headers.get("x-request-id") })
}

describe("the dashboard session as a management credential", () => {
  it("an admin's session reads the org's data with no key", async () => {
    const { cookie } = await sessionFor(adminId)
    const users = await call(server, "GET", "/api/v1/users?limit=100", { headers: { cookie } })
    expect(users.status, JSON.stringify(users.body)).toBe(200)
    expect((users.body as { data: Array<{ email: string }> }).data.map((u) => u.email)).toContain("ada@people.example.com")
  })

  it("a change needs the session's CSRF token: without it, with a wrong one or from another origin 403", async () => {
    const { cookie, csrf } = await sessionFor(adminId)
    const body = rule("csrf-refused")
    expectEnvelope(await call(server, "POST", "/api/v1/rules", { headers: { cookie }, body }), 403, "csrf_token_invalid")
    expectEnvelope(
      await call(server, "POST", "/api/v1/rules", { headers: { cookie, "x-csrf-token": csrf.slice(1) + "A" }, body }),
      403,
      "csrf_token_invalid"
    )
    expectEnvelope(
      await call(server, "POST", "/api/v1/rules", { headers: { cookie, "x-csrf-token": csrf, origin: "https://evil.example" }, body }),
      403,
      "csrf_token_invalid"
    )
    const rules = await call(server, "GET", "/api/v1/rules?limit=100", { key: org.api_key_live! })
    expect((rules.body as { data: Array<{ name: string }> }).data.map((r) => r.name)).not.toContain("csrf-refused")
  })

  it("with the token the change is made, and its audit entry names the person", async () => {
    const { cookie, csrf } = await sessionFor(adminId)
    const created = await call(server, "POST", "/api/v1/rules", {
      headers: { cookie, "x-csrf-token": csrf, origin: server.baseUrl },
      body: rule("made-by-ada")
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const requestId = created.headers.get("x-request-id")
    const log = await call(server, "GET", "/api/v1/audit-log?limit=100", { key: org.api_key_live! })
    const entry = (log.body as { data: Array<{ request_id: string; actor: unknown }> }).data.find((e) => e.request_id === requestId)
    expect(entry?.actor).toMatchObject({ type: "user", id: adminId })
  })

  it("a member's session may not read the org's users (403 insufficient_role)", async () => {
    const member = await call(server, "POST", "/api/v1/users", {
      key: org.api_key_live!,
      body: { email: "mo@people.example.com", name: "Mo", role: "member" }
    })
    const { cookie } = await sessionFor((member.body as { id: string }).id)
    expectEnvelope(await call(server, "GET", "/api/v1/users", { headers: { cookie } }), 403, "insufficient_role")
  })

  it("an expired, ended or unknown session is 401 session_expired", async () => {
    const expired = await sessionFor(adminId, -1)
    expectEnvelope(await call(server, "GET", "/api/v1/users", { headers: { cookie: expired.cookie } }), 401, "session_expired")
    expectEnvelope(await call(server, "GET", "/api/v1/users", { headers: { cookie: "se_session=nothing-like-it" } }), 401, "session_expired")
  })

  it("a deactivated person's session ends with them", async () => {
    const made = await call(server, "POST", "/api/v1/users", {
      key: org.api_key_live!,
      body: { email: "leaving@people.example.com", name: "Leaving", role: "admin" }
    })
    const id = (made.body as { id: string }).id
    const { cookie } = await sessionFor(id)
    expect((await call(server, "GET", "/api/v1/users", { headers: { cookie } })).status).toBe(200)
    expect((await call(server, "DELETE", `/api/v1/users/${id}`, { key: org.api_key_live! })).status).toBeLessThan(300)
    expectEnvelope(await call(server, "GET", "/api/v1/users", { headers: { cookie } }), 401, "session_expired")
  })

  it("keys work as before, and a request with a key is the key's even beside a cookie", async () => {
    const { cookie } = await sessionFor(adminId)
    expect((await call(server, "GET", "/api/v1/users", { key: org.api_key_live! })).status).toBe(200)
    expectEnvelope(await call(server, "GET", "/api/v1/users", { key: "sk_live_wrong", headers: { cookie } }), 401, "invalid_api_key")
    expectEnvelope(await call(server, "GET", "/api/v1/users"), 401, "missing_api_key")
  })
})
