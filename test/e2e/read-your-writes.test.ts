import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"

/**
 * Read-your-writes on one node: once the management API has answered a change of rules, keys,
 * users, memberships or org settings, the very next request is judged by it. Key lookups are cached for an hour here, so a
 * refusal cannot come from a cache that happened to be empty.
 */
describe.each(logVariants())("the next signal after a change, on the node that made it, over %s", (_name, logEnv) => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer({ env: { ...logEnv(), AUTH_CACHE_TTL: "1 hour" } })
  })
  afterAll(() => server?.stop())

  const signal = (key: string, metadata: Record<string, unknown> = { model: "o3", tokens_in: 10, tokens_out: 10 }) =>
    call(server, "POST", "/engine/v1/signals", { key, body: { type: "post-tool", adapter: "claude-code", session_id: "ryw", metadata } })

  const rule = async (o: Bootstrapped, body: Record<string, unknown>) => {
    const res = await call(server, "POST", "/api/v1/rules", { key: o.api_key_live!, body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.id as string
  }

  const noO3 = (o: Bootstrapped) => ({
    name: "No o3",
    type: "model_filter",
    scope: "org",
    scope_id: o.org_id,
    action: "block",
    condition: { model: { in: ["o3"] } },
    action_config: { message: "o3 is not allowed" }
  })

  it("a block rule created, disabled, enabled and deleted applies from the next signal", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "ryw-rules", "team")
    expect((await signal(o.license_key)).body).toMatchObject({ ok: true })
    // Several rounds: each change is answered, and the next signal shows it.
    for (let round = 0; round < 3; round++) {
      const id = await rule(o, noO3(o))
      expect((await signal(o.license_key)).body, `round ${round}: created`).toMatchObject({ ok: false, action: "block", rule_id: id })
      const off = await call(server, "PUT", `/api/v1/rules/${id}`, { key: o.api_key_live!, body: { enabled: false } })
      expect(off.status, JSON.stringify(off.body)).toBe(200)
      expect((await signal(o.license_key)).body, `round ${round}: disabled`).toMatchObject({ ok: true })
      const on = await call(server, "PUT", `/api/v1/rules/${id}`, { key: o.api_key_live!, body: { enabled: true } })
      expect(on.status, JSON.stringify(on.body)).toBe(200)
      expect((await signal(o.license_key)).body, `round ${round}: enabled`).toMatchObject({ ok: false, rule_id: id })
      expect((await call(server, "DELETE", `/api/v1/rules/${id}`, { key: o.api_key_live! })).status).toBe(204)
      expect((await signal(o.license_key)).body, `round ${round}: deleted`).toMatchObject({ ok: true })
    }
  })

  it("a team rule applies from the next signal once the user joins the team, and stops once it leaves", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "ryw-teams", "team")
    const admin = o.api_key_live!
    const team = await call(server, "POST", "/api/v1/teams", { key: admin, body: { name: "no o3 squad" } })
    expect(team.status, JSON.stringify(team.body)).toBe(201)
    const id = await rule(o, { ...noO3(o), scope: "team", scope_id: team.body.id })
    for (let round = 0; round < 3; round++) {
      expect((await signal(o.license_key)).body, `round ${round}: outside`).toMatchObject({ ok: true })
      const joined = await call(server, "PATCH", `/api/v1/users/${o.user_id}`, { key: admin, body: { team_ids: [team.body.id] } })
      expect(joined.status, JSON.stringify(joined.body)).toBe(200)
      expect((await signal(o.license_key)).body, `round ${round}: joined`).toMatchObject({ ok: false, rule_id: id })
      const left = await call(server, "PATCH", `/api/v1/users/${o.user_id}`, { key: admin, body: { team_ids: [] } })
      expect(left.status, JSON.stringify(left.body)).toBe(200)
    }
  })

  it("a budget rule created after the budget was spent blocks the next signal", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "ryw-budget", "team")
    for (let i = 0; i < 3; i++) expect((await signal(o.license_key, { model: "gpt-4o", tokens_in: 100, tokens_out: 0 })).body).toMatchObject({ ok: true })
    const id = await rule(o, {
      name: "Daily tokens",
      type: "budget",
      scope: "user",
      scope_id: o.user_id,
      action: "block",
      condition: { window: "daily", metric: "tokens_total", threshold: 200 },
      action_config: { message: "spent" }
    })
    expect((await signal(o.license_key, { model: "gpt-4o", tokens_in: 1, tokens_out: 0 })).body).toMatchObject({ ok: false, action: "block", rule_id: id })
  })

  it("an org's new time zone counts the next signal in that zone's day", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "ryw-zone", "team")
    const id = await rule(o, {
      name: "Daily tokens",
      type: "budget",
      scope: "user",
      scope_id: o.user_id,
      action: "block",
      condition: { window: "daily", metric: "tokens_total", threshold: 100 },
      action_config: { message: "spent" }
    })
    // Spent today (UTC): the key's lookup, the org's settings with it, is cached for an hour here.
    for (let i = 0; i < 2; i++) await signal(o.license_key, { model: "gpt-4o", tokens_in: 60, tokens_out: 0 })
    expect((await signal(o.license_key, { model: "gpt-4o", tokens_in: 1, tokens_out: 0 })).body).toMatchObject({ ok: false, rule_id: id })
    // A zone whose date differs from UTC's right now: UTC+14 from 10:00 UTC on, UTC-12 before noon.
    const zone = new Date().getUTCHours() >= 10 ? "Pacific/Kiritimati" : "Etc/GMT+12"
    for (let round = 0; round < 3; round++) {
      const moved = await call(server, "PATCH", "/api/v1/org", { key: o.api_key_live!, body: { time_zone: zone } })
      expect(moved.status, JSON.stringify(moved.body)).toBe(200)
      // Another day there, with nothing spent in it yet.
      expect((await signal(o.license_key, { model: "gpt-4o", tokens_in: 1, tokens_out: 0 })).body, `round ${round}: moved`).toMatchObject({ ok: true })
      const back = await call(server, "PATCH", "/api/v1/org", { key: o.api_key_live!, body: { time_zone: "UTC" } })
      expect(back.status, JSON.stringify(back.body)).toBe(200)
      expect((await signal(o.license_key, { model: "gpt-4o", tokens_in: 1, tokens_out: 0 })).body, `round ${round}: back`).toMatchObject({
        ok: false,
        rule_id: id
      })
    }
  })

  it("a revoked license key and a revoked API key are refused on the next request, every time", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "ryw-keys", "team")
    const admin = o.api_key_live!
    for (let trial = 0; trial < 10; trial++) {
      const key = await call(server, "POST", "/api/v1/license-keys", { key: admin, body: { user_id: o.user_id } })
      expect(key.status, JSON.stringify(key.body)).toBe(201)
      expect((await signal(key.body.key, { model: "gpt-4o" })).status).toBe(200)
      expect((await call(server, "DELETE", `/api/v1/license-keys/${key.body.id}`, { key: admin })).status).toBe(204)
      const next = await signal(key.body.key, { model: "gpt-4o" })
      expect(next.status, `license key, trial ${trial}`).toBe(401)
      expect(next.body.error?.code ?? next.body.code).toBe("invalid_license_key")

      const apiKey = await call(server, "POST", "/api/v1/api-keys", { key: admin, body: { name: `ci-${trial}`, scopes: ["admin:read"] } })
      expect(apiKey.status, JSON.stringify(apiKey.body)).toBe(201)
      expect((await call(server, "GET", "/api/v1/org", { key: apiKey.body.key })).status).toBe(200)
      expect((await call(server, "DELETE", `/api/v1/api-keys/${apiKey.body.id}`, { key: admin })).status).toBe(204)
      const read = await call(server, "GET", "/api/v1/org", { key: apiKey.body.key })
      expect(read.status, `API key, trial ${trial}`).toBe(401)
      expect(read.body.error?.code ?? read.body.code).toBe("invalid_api_key")
    }
  })

  it("a deactivated user's next signal is refused", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "ryw-users", "team")
    const admin = o.api_key_live!
    for (let trial = 0; trial < 5; trial++) {
      const user = await call(server, "POST", "/api/v1/users", { key: admin, body: { email: `u${trial}@ryw.dev`, name: `U${trial}` } })
      expect(user.status, JSON.stringify(user.body)).toBe(201)
      const key = await call(server, "POST", "/api/v1/license-keys", { key: admin, body: { user_id: user.body.id } })
      expect((await signal(key.body.key, { model: "gpt-4o" })).status).toBe(200)
      expect((await call(server, "DELETE", `/api/v1/users/${user.body.id}`, { key: admin })).status).toBe(204)
      expect((await signal(key.body.key, { model: "gpt-4o" })).status, `trial ${trial}`).toBe(401)
    }
  })
})
