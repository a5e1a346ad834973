import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"

let server: TestServer
let acme: Bootstrapped
let globex: Bootstrapped

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "acme", "team")
  globex = await bootstrapOrg(server.databaseUrl, "globex", "business")
})
afterAll(() => server?.stop())

describe("bootstrap credentials", () => {
  it("the live and test API keys and the license key authenticate, each on its own surface", async () => {
    const live = await call(server, "GET", "/api/v1/org", { key: acme.api_key_live! })
    expect(live.status).toBe(200)
    expect(live.body).toMatchObject({ id: acme.org_id, name: "acme", plan: "team", environment: "live" })
    const test = await call(server, "GET", "/api/v1/org", { key: acme.api_key_test })
    expect(test.body).toMatchObject({ id: acme.org_id, environment: "test" })
    const me = await call(server, "GET", "/engine/v1/me", { key: acme.license_key })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ user_id: acme.user_id, org_id: acme.org_id, plan: "team", environment: "live" })
  })
  it("keys have the spec's formats", () => {
    expect(acme.api_key_live).toMatch(/^sek_live_[0-9a-f]{32}$/)
    expect(acme.api_key_test).toMatch(/^sek_test_[0-9a-f]{32}$/)
    expect(acme.license_key).toMatch(/^lic_[0-9a-f]{20}$/)
  })
  it("the admin user is in the default team", async () => {
    const user = await call(server, "GET", `/api/v1/users/${acme.user_id}`, { key: acme.api_key_live! })
    expect(user.body).toMatchObject({ id: acme.user_id, role: "admin", team_ids: [acme.team_id] })
  })
})

describe("environments are isolated", () => {
  it("a test key cannot see or revoke live keys", async () => {
    const created = await call(server, "POST", "/api/v1/api-keys", {
      key: acme.api_key_live!,
      body: { name: "live ci", scopes: ["events:read"] }
    })
    expect(created.status).toBe(201)
    expect(created.body.environment).toBe("live")
    expect(created.body.key).toMatch(/^sek_live_/)
    expect(created.body.key_hint).toBe(`sek_live_…${created.body.key.slice(-4)}`)

    const seenByTest = await call(server, "GET", "/api/v1/api-keys?limit=100", { key: acme.api_key_test })
    expect(seenByTest.status).toBe(200)
    expect(seenByTest.body.data.every((k: { environment: string }) => k.environment === "test")).toBe(true)
    expect(seenByTest.body.data.map((k: { id: string }) => k.id)).not.toContain(created.body.id)

    const revokeAttempt = await call(server, "DELETE", `/api/v1/api-keys/${created.body.id}`, { key: acme.api_key_test })
    expect(revokeAttempt.status).toBe(404)
    expect((await call(server, "GET", "/api/v1/org", { key: created.body.key })).status).toBe(403)

    const seenByLive = await call(server, "GET", "/api/v1/api-keys?limit=100", { key: acme.api_key_live! })
    expect(seenByLive.body.data.map((k: { id: string }) => k.id)).toContain(created.body.id)
    expect(JSON.stringify(seenByLive.body)).not.toContain(created.body.key)
  })
  it("license keys are listed per environment", async () => {
    const testLicense = await call(server, "POST", "/api/v1/license-keys", {
      key: acme.api_key_test,
      body: { user_id: acme.user_id }
    })
    expect(testLicense.status).toBe(201)
    expect(testLicense.body.environment).toBe("test")
    const me = await call(server, "GET", "/engine/v1/me", { key: testLicense.body.key })
    expect(me.body.environment).toBe("test")

    const live = await call(server, "GET", "/api/v1/license-keys", { key: acme.api_key_live! })
    const test = await call(server, "GET", "/api/v1/license-keys", { key: acme.api_key_test })
    expect(live.body.data.map((k: { id: string }) => k.id)).not.toContain(testLicense.body.id)
    expect(test.body.data.map((k: { id: string }) => k.id)).toContain(testLicense.body.id)
  })
})

describe("orgs are isolated", () => {
  it("another org's users, teams, projects and keys are invisible", async () => {
    const project = await call(server, "POST", "/api/v1/projects", { key: globex.api_key_live!, body: { name: "secret" } })
    expect(project.status).toBe(201)
    const user = await call(server, "POST", "/api/v1/users", {
      key: globex.api_key_live!,
      body: { email: "dev@globex.test", name: "Dev" }
    })
    expect(user.status).toBe(201)

    expect((await call(server, "GET", `/api/v1/users/${user.body.id}`, { key: acme.api_key_live! })).status).toBe(404)
    for (const path of ["/api/v1/users", "/api/v1/teams", "/api/v1/projects", "/api/v1/api-keys", "/api/v1/license-keys"]) {
      const res = await call(server, "GET", `${path}?limit=100`, { key: acme.api_key_live! })
      expect(res.status).toBe(200)
      const text = JSON.stringify(res.body)
      expect(text).not.toContain(globex.org_id)
      expect(text).not.toContain(globex.user_id)
      expect(text).not.toContain(user.body.id)
      expect(text).not.toContain(project.body.id)
    }
    const license = await call(server, "POST", "/api/v1/license-keys", {
      key: acme.api_key_live!,
      body: { user_id: user.body.id }
    })
    expect(license.status).toBe(422)
    const team = await call(server, "POST", "/api/v1/teams", {
      key: acme.api_key_live!,
      body: { name: "poach", member_ids: [user.body.id] }
    })
    expect(team.status).toBe(422)
  })
  it("the same names may exist in two orgs", async () => {
    for (const org of [acme, globex]) {
      expect((await call(server, "POST", "/api/v1/projects", { key: org.api_key_live!, body: { name: "shared-name" } })).status).toBe(201)
    }
  })
})

describe("scopes a key can grant", () => {
  it("a key grants only scopes it holds (write implies read), duplicates dropped; admin:write alone is not every scope", async () => {
    const make = (key: string, scopes: ReadonlyArray<string>) => call(server, "POST", "/api/v1/api-keys", { key, body: { name: "granted", scopes } })
    const admin = await make(acme.api_key_test, ["admin:write", "rules:write"])
    expect(admin.status).toBe(201)
    const escalated = await make(admin.body.key, ["webhooks:write", "rules:write"])
    expect(escalated.status).toBe(403)
    expect(escalated.body.code).toBe("insufficient_scope")
    expect(escalated.body.error).toContain("lacks webhooks:write")
    const within = await make(admin.body.key, ["rules:read", "rules:write", "rules:read", "admin:read"])
    expect(within.status).toBe(201)
    expect(within.body.scopes).toEqual(["rules:read", "rules:write", "admin:read"])
    // The refused key was never made: the list holds the two that were.
    const names = (await call(server, "GET", "/api/v1/api-keys?limit=100", { key: acme.api_key_test })).body.data
      .filter((k: { name: string }) => k.name === "granted")
    expect(names).toHaveLength(2)
  })
})

describe("revocation", () => {
  it("after a downgrade below the team plan a live key can still list and revoke keys, and nothing else", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "downgraded", "team")
    const spare = await call(server, "POST", "/api/v1/api-keys", { key: org.api_key_live!, body: { name: "leaked", scopes: ["events:read"] } })
    expect(spare.status).toBe(201)
    await withStore(server.databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE orgs SET plan = 'developer' WHERE id = ${org.org_id}`))
    const rules = await call(server, "GET", "/api/v1/rules", { key: org.api_key_live! })
    expect(rules.status).toBe(403)
    expect(rules.body.code).toBe("plan_upgrade_required")
    expect((await call(server, "GET", "/engine/v1/sessions", { key: org.license_key })).body.code).toBe("plan_upgrade_required")

    const keys = await call(server, "GET", "/api/v1/api-keys?limit=100", { key: org.api_key_live! })
    expect(keys.status).toBe(200)
    expect(keys.body.data.map((k: { id: string }) => k.id)).toContain(spare.body.id)
    expect((await call(server, "DELETE", `/api/v1/api-keys/${spare.body.id}`, { key: org.api_key_live! })).status).toBe(204)
    const licenses = await call(server, "GET", "/api/v1/license-keys?limit=100", { key: org.api_key_live! })
    expect(licenses.status).toBe(200)
    const [live] = licenses.body.data
    expect((await call(server, "DELETE", `/api/v1/license-keys/${live.id}`, { key: org.api_key_live! })).status).toBe(204)
    // Both are gone for good, whatever the plan becomes.
    await withStore(server.databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE orgs SET plan = 'team' WHERE id = ${org.org_id}`))
    expect((await call(server, "GET", "/api/v1/events", { key: spare.body.key })).body.code).toBe("invalid_api_key")
    expect((await call(server, "GET", "/engine/v1/sessions", { key: org.license_key })).body.code).toBe("invalid_license_key")
  })

  it("a revoked API key or license key stops authenticating", async () => {
    const key = await call(server, "POST", "/api/v1/api-keys", { key: acme.api_key_test, body: { name: "tmp", scopes: ["admin:read"] } })
    expect((await call(server, "GET", "/api/v1/org", { key: key.body.key })).status).toBe(200)
    expect((await call(server, "DELETE", `/api/v1/api-keys/${key.body.id}`, { key: acme.api_key_test })).status).toBe(204)
    const after = await call(server, "GET", "/api/v1/org", { key: key.body.key })
    expect(after.status).toBe(401)
    expect(after.body.code).toBe("invalid_api_key")

    const license = await call(server, "POST", "/api/v1/license-keys", { key: acme.api_key_test, body: { user_id: acme.user_id } })
    expect((await call(server, "GET", "/engine/v1/me", { key: license.body.key })).status).toBe(200)
    expect((await call(server, "DELETE", `/api/v1/license-keys/${license.body.id}`, { key: acme.api_key_test })).status).toBe(204)
    expect((await call(server, "GET", "/engine/v1/me", { key: license.body.key })).status).toBe(401)

    const listed = await call(server, "GET", "/api/v1/license-keys", { key: acme.api_key_test })
    const revoked = listed.body.data.find((k: { id: string }) => k.id === license.body.id)
    expect(revoked.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT/)
  })
})

describe("users, teams, projects", () => {
  it("creates a user in teams and lists it", async () => {
    const team = await call(server, "POST", "/api/v1/teams", { key: acme.api_key_test, body: { name: "platform" } })
    expect(team.status).toBe(201)
    const user = await call(server, "POST", "/api/v1/users", {
      key: acme.api_key_test,
      body: { email: "ada@acme.dev", name: "Ada", team_ids: [team.body.id, acme.team_id] }
    })
    expect(user.status).toBe(201)
    expect(user.body).toMatchObject({ email: "ada@acme.dev", name: "Ada", role: "member" })
    expect([...user.body.team_ids].sort()).toEqual([team.body.id, acme.team_id].sort())
    const teams = await call(server, "GET", "/api/v1/teams", { key: acme.api_key_test })
    const platform = teams.body.data.find((t: { id: string }) => t.id === team.body.id)
    expect(platform.member_ids).toEqual([user.body.id])
    expect(
      (await call(server, "POST", "/api/v1/users", {
        key: acme.api_key_test,
        body: { email: "ada@acme.dev", name: "Ada again" }
      })).status
    ).toBe(409)
    // The same address in other letters is the same address.
    const shouting = await call(server, "POST", "/api/v1/users", { key: acme.api_key_test, body: { email: "ADA@Acme.Dev", name: "Ada loud" } })
    expect(shouting.status).toBe(409)
    expect(shouting.body.code).toBe("already_exists")
    const users = await call(server, "GET", "/api/v1/users?limit=100", { key: acme.api_key_test })
    expect(users.body.data.filter((u: { email: string }) => u.email.toLowerCase() === "ada@acme.dev")).toHaveLength(1)
  })
  it("pages through a list with a cursor, newest first, across inserts", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "pager", "team")
    const names = Array.from({ length: 7 }, (_, i) => `p${i}`)
    for (const name of names) {
      await call(server, "POST", "/api/v1/projects", { key: org.api_key_test, body: { name } })
    }
    const seen: Array<string> = []
    let cursor = ""
    let pages = 0
    do {
      const res = await call(server, "GET", `/api/v1/projects?limit=3${cursor ? `&cursor=${cursor}` : ""}`, { key: org.api_key_test })
      expect(res.status).toBe(200)
      seen.push(...res.body.data.map((p: { name: string }) => p.name))
      if (pages === 0) await call(server, "POST", "/api/v1/projects", { key: org.api_key_test, body: { name: "late" } })
      expect(typeof res.body.cursor).toBe("string")
      cursor = res.body.has_more ? res.body.cursor : ""
      expect(res.body.has_more).toBe(cursor !== "")
      pages++
    } while (cursor)
    expect(seen).toEqual([...names].reverse())
    expect(pages).toBe(3)
  })
})
