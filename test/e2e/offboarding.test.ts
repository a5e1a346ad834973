import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"
import { expectEnvelope } from "./activity-helpers.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server?.stop())

const as = (key: string) => ({
  get: (path: string) => call(server, "GET", `/api/v1${path}`, { key }),
  post: (path: string, body: unknown) => call(server, "POST", `/api/v1${path}`, { key, body }),
  patch: (path: string, body: unknown) => call(server, "PATCH", `/api/v1${path}`, { key, body }),
  del: (path: string) => call(server, "DELETE", `/api/v1${path}`, { key }),
  call: (method: string, path: string, body?: unknown) => call(server, method, `/api/v1${path}`, { key, body })
})

const setUp = async (name: string) => {
  const org = await bootstrapOrg(server.databaseUrl, name, "team")
  const api = as(org.api_key_live!)
  const team = async (teamName: string, member_ids: ReadonlyArray<string> = []) => {
    const res = await api.post("/teams", { name: teamName, member_ids })
    expect(res.status).toBe(201)
    return res.body.id as string
  }
  const user = async (email: string, team_ids: ReadonlyArray<string> = []) => {
    const res = await api.post("/users", { email, name: email, team_ids })
    expect(res.status).toBe(201)
    return res.body.id as string
  }
  const licenseKey = async (userId: string) => {
    const res = await api.post("/license-keys", { user_id: userId })
    expect(res.status).toBe(201)
    return res.body.key as string
  }
  return { org, api, team, user, licenseKey }
}

const signal = (licenseKey: string, metadata: Record<string, unknown> = {}) =>
  call(server, "POST", "/engine/v1/signals", {
    key: licenseKey,
    body: { type: "post-tool", adapter: "claude-code", session_id: "off", metadata: { model: "gpt-4o", ...metadata } }
  })

describe("changing users and teams", () => {
  it("PATCH /users/:id changes name and role and replaces the user's teams, which the teams show", async () => {
    const { api, team, user } = await setUp("people-patch")
    const t1 = await team("one")
    const t2 = await team("two")
    const u = await user("u@people.dev", [t1])
    const res = await api.patch(`/users/${u}`, { name: "Ursula", role: "admin", team_ids: [t2, t2] })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ id: u, name: "Ursula", role: "admin", team_ids: [t2], status: "active", deactivated_at: null })
    expect((await api.get(`/users/${u}`)).body).toEqual(res.body)
    expect((await api.get(`/teams/${t1}`)).body.member_ids).not.toContain(u)
    expect((await api.get(`/teams/${t2}`)).body.member_ids).toContain(u)
    // Only what is sent changes; [] leaves every team.
    expect((await api.patch(`/users/${u}`, { team_ids: [] })).body).toMatchObject({ name: "Ursula", role: "admin", team_ids: [] })
    expect((await api.patch(`/users/${u}`, {})).body).toMatchObject({ name: "Ursula", team_ids: [] })

    expectEnvelope(await api.patch(`/users/${u}`, { team_ids: ["team_nope"] }), 422, "unknown_reference")
    expectEnvelope(await api.patch(`/users/${u}`, { name: null }), 400, "invalid_parameters")
    expectEnvelope(await api.patch(`/users/${u}`, { email: "new@people.dev" }), 400, "invalid_parameters")
    expectEnvelope(await api.patch(`/users/${u}`, { role: "owner" }), 400, "invalid_parameters")
    expectEnvelope(await api.patch("/users/user_nope", { name: "X" }), 404, "not_found")
  })

  it("PATCH /teams/:id renames a team and replaces its members; GET /teams/:id shows one team", async () => {
    const { api, team, user } = await setUp("teams-patch")
    const a = await user("a@teams.dev")
    const b = await user("b@teams.dev")
    const t = await team("core", [a])
    await team("taken")
    const res = await api.patch(`/teams/${t}`, { name: "platform", member_ids: [b, a] })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toMatchObject({ id: t, name: "platform", member_ids: [a, b].sort() })
    expect((await api.get(`/teams/${t}`)).body).toEqual(res.body)
    expect((await api.get(`/users/${b}`)).body.team_ids).toContain(t)

    expectEnvelope(await api.patch(`/teams/${t}`, { name: "taken" }), 409, "already_exists")
    expectEnvelope(await api.patch(`/teams/${t}`, { member_ids: ["user_nope"] }), 422, "unknown_reference")
    expectEnvelope(await api.patch(`/teams/${t}`, { members: [] }), 400, "invalid_parameters")
    expect((await api.get(`/teams/${t}`)).body).toEqual(res.body)
    expectEnvelope(await api.get("/teams/team_nope"), 404, "not_found")
    // Another org's team is not found either.
    const other = await bootstrapOrg(server.databaseUrl, "teams-patch-other", "team")
    expectEnvelope(await as(other.api_key_live!).get(`/teams/${t}`), 404, "not_found")
    expectEnvelope(await as(other.api_key_live!).patch(`/teams/${t}`, { name: "mine" }), 404, "not_found")
  })

  it("a team budget follows the user out of the team", async () => {
    const { api, team, user, licenseKey } = await setUp("teams-budget")
    const capped = await team("capped")
    const free = await team("free")
    const u = await user("dev@budget.dev", [capped])
    const key = await licenseKey(u)
    const rule = await api.post("/rules", {
      name: "capped team",
      type: "budget",
      scope: "team",
      scope_id: capped,
      priority: 1,
      condition: { window: "daily", metric: "tokens_total", threshold: 100 },
      action: "block",
      action_config: { message: "team cap" }
    })
    expect(rule.status, JSON.stringify(rule.body)).toBeLessThan(300)
    const blocked = await waitFor(() => signal(key, { tokens_in: 60 }), (r) => r.body.ok === false, { what: "the team budget to block" })
    expect(blocked.body).toMatchObject({ rule_id: rule.body.id, message: "team cap" })
    expect((await api.patch(`/users/${u}`, { team_ids: [free] })).status).toBe(200)
    expect((await signal(key, { tokens_in: 60 })).body).toMatchObject({ ok: true })
  })
})

describe("offboarding (DELETE /users/:id)", () => {
  it("revokes the user's keys, takes it out of its teams and keeps its activity; it can be reactivated", async () => {
    const { org, api, team, user, licenseKey } = await setUp("offboard")
    const t = await team("squad")
    const u = await user("leaver@offboard.dev", [t])
    const key = await licenseKey(u)
    const testKey = (await as(org.api_key_test).post("/license-keys", { user_id: u })).body.key as string
    const sent = await signal(key, { tokens_in: 5 })
    expect(sent.body.ok).toBe(true)
    expect((await signal(testKey)).status).toBe(200)

    const res = await api.del(`/users/${u}`)
    expect(res.status).toBe(204)
    // Both environments' keys stop working at once (the tests run without the lookup cache).
    expect((await signal(key)).status).toBe(401)
    expect((await signal(testKey)).status).toBe(401)
    const gone = (await api.get(`/users/${u}`)).body
    expect(gone).toMatchObject({ id: u, status: "deactivated", team_ids: [] })
    expect(Date.parse(gone.deactivated_at)).toBeGreaterThan(0)
    expect((await api.get(`/teams/${t}`)).body.member_ids).not.toContain(u)
    expect((await api.get("/license-keys")).body.data.find((k: any) => k.user_id === u).revoked_at).not.toBeNull()
    // Its activity stays.
    expect((await api.get(`/events/${sent.body.signal_id}`)).status).toBe(200)
    expect((await api.get(`/sessions?user_id=${u}`)).body.data).toHaveLength(1)
    // Again: still 204, nothing changes.
    expect((await api.del(`/users/${u}`)).status).toBe(204)
    expect((await api.get(`/users/${u}`)).body).toEqual(gone)

    // A deactivated user gets no key and joins no team.
    expectEnvelope(await api.post("/license-keys", { user_id: u }), 409, "user_deactivated")
    expectEnvelope(await api.patch(`/teams/${t}`, { member_ids: [u] }), 409, "user_deactivated")
    expectEnvelope(await api.post("/teams", { name: "new squad", member_ids: [u] }), 409, "user_deactivated")
    expectEnvelope(await api.patch(`/users/${u}`, { team_ids: [t] }), 409, "user_deactivated")

    // Reactivated: active again, with no key until one is made.
    const back = await api.patch(`/users/${u}`, { status: "active", team_ids: [t] })
    expect(back.status, JSON.stringify(back.body)).toBe(200)
    expect(back.body).toMatchObject({ status: "active", deactivated_at: null, team_ids: [t] })
    expect((await signal(key)).status).toBe(401)
    expect((await signal(await licenseKey(u))).status).toBe(200)
    expectEnvelope(await api.del("/users/user_nope"), 404, "not_found")
  })

  it("a test key cannot change users or teams where the plan has live keys; below it, it can", async () => {
    const { org, api, team, user } = await setUp("people-test-key")
    const t = await team("t")
    const u = await user("u@test-key.dev")
    const test = as(org.api_key_test)
    expectEnvelope(await test.patch(`/users/${u}`, { name: "X" }), 403, "live_key_required")
    expectEnvelope(await test.del(`/users/${u}`), 403, "live_key_required")
    expectEnvelope(await test.patch(`/teams/${t}`, { name: "X" }), 403, "live_key_required")
    expectEnvelope(await test.del(`/teams/${t}`), 403, "live_key_required")
    expect((await api.get(`/users/${u}`)).body).toMatchObject({ name: "u@test-key.dev", status: "active" })
    expect((await test.get(`/teams/${t}`)).status).toBe(200)

    const small = await bootstrapOrg(server.databaseUrl, "people-developer", "developer")
    const smallApi = as(small.api_key_test)
    expect((await smallApi.patch(`/users/${small.user_id}`, { name: "Solo" })).body).toMatchObject({ name: "Solo" })
    expect((await smallApi.del(`/users/${small.user_id}`)).status).toBe(204)
  })

  it("DELETE /teams/:id deletes a team no rule is scoped to; its members stay, and a rule cannot name it after", async () => {
    const { org, api, team, user } = await setUp("teams-delete")
    const t = await team("doomed")
    const u = await user("u@teams-delete.dev", [t])
    // A rule of either environment scoped to the team holds it.
    const budget = {
      name: "team budget",
      type: "budget",
      scope: "team",
      scope_id: t,
      condition: { window: "daily", metric: "tokens_total", threshold: 10 },
      action: "log"
    }
    const rule = await as(org.api_key_test).post("/rules", budget)
    expect(rule.status).toBe(201)
    const refused = await api.del(`/teams/${t}`)
    expectEnvelope(refused, 409, "team_in_use")
    expect(refused.body.error).toContain(rule.body.id)
    expect((await api.get(`/teams/${t}`)).status).toBe(200)
    // Re-scoped to the org, the rule lets go.
    expect((await as(org.api_key_test).call("PUT", `/rules/${rule.body.id}`, { scope: "org", scope_id: org.org_id })).status).toBe(200)

    expect((await api.del(`/teams/${t}`)).status).toBe(204)
    expectEnvelope(await api.get(`/teams/${t}`), 404, "not_found")
    expect((await api.get("/teams")).body.data.map((x: { id: string }) => x.id)).not.toContain(t)
    expect((await api.get(`/users/${u}`)).body).toMatchObject({ id: u, status: "active", team_ids: [] })
    expectEnvelope(await api.del(`/teams/${t}`), 404, "not_found")
    expectEnvelope(await api.post("/rules", budget), 422, "validation_error")
    expectEnvelope(await as(org.api_key_test).call("PUT", `/rules/${rule.body.id}`, { scope: "team", scope_id: t }), 422, "validation_error")
    // The name is free again.
    expect((await api.post("/teams", { name: "doomed" })).status).toBe(201)
    expectEnvelope(await api.del("/teams/team_nope"), 404, "not_found")
  })

  it("a team deleted while a rule is created for it: one of the two is refused, never a rule over a deleted team", async () => {
    const { api, team } = await setUp("teams-race")
    for (let i = 0; i < 15; i++) {
      const t = await team(`race-${i}`)
      const [created, deleted] = await Promise.all([
        api.post("/rules", { name: "r", type: "model_filter", scope: "team", scope_id: t, condition: { model: { in: ["x"] } }, action: "log" }),
        api.del(`/teams/${t}`)
      ])
      expect([["201", "409"], ["422", "204"]].map((o) => o.join("/"))).toContain(`${created.status}/${deleted.status}`)
    }
    const rules = (await api.get("/rules?limit=100")).body.data as Array<{ scope_id: string }>
    const teams = new Set(((await api.get("/teams?limit=100")).body.data as Array<{ id: string }>).map((t) => t.id))
    expect(rules.every((r) => teams.has(r.scope_id))).toBe(true)
  })

  it("DELETE /projects/:id deletes a registration; project rules over its id are not touched", async () => {
    const { org, api } = await setUp("projects-delete")
    const project = await api.post("/projects", { name: "web" })
    expect(project.status).toBe(201)
    const rule = await api.post("/rules", {
      name: "web cost",
      type: "budget",
      scope: "project",
      scope_id: project.body.id,
      condition: { window: "monthly", metric: "cost_usd", threshold: 5 },
      action: "warn"
    })
    expect(rule.status).toBe(201)
    expectEnvelope(await as(org.api_key_test).del(`/projects/${project.body.id}`), 403, "live_key_required")
    expect((await api.del(`/projects/${project.body.id}`)).status).toBe(204)
    expect((await api.get("/projects")).body.data).toEqual([])
    expectEnvelope(await api.del(`/projects/${project.body.id}`), 404, "not_found")
    expect((await api.get(`/rules/${rule.body.id}`)).body).toMatchObject({ scope: "project", scope_id: project.body.id })
    // Another org's project is not this org's to delete.
    const other = await setUp("projects-delete-other")
    const theirs = await other.api.post("/projects", { name: "web" })
    expectEnvelope(await api.del(`/projects/${theirs.body.id}`), 404, "not_found")
    expect((await other.api.get("/projects")).body.data).toHaveLength(1)
  })

  it("offboarding while keys are made and teams joined: the user ends with no working key and no team", { timeout: 60_000 }, async () => {
    const { api, team, user } = await setUp("offboard-race")
    const t1 = await team("one")
    const t2 = await team("two")
    for (let round = 0; round < 8; round++) {
      const u = await user(`u${round}@offboard-race.dev`)
      const answers = await Promise.all([
        api.del(`/users/${u}`),
        ...Array.from({ length: 5 }, () => api.post("/license-keys", { user_id: u })),
        api.patch(`/users/${u}`, { team_ids: [t1] }),
        api.patch(`/teams/${t2}`, { member_ids: [u] })
      ])
      const [deleted, ...rest] = answers
      expect(deleted!.status).toBe(204)
      // Each change either went first (and the offboarding undid it) or was refused as too late.
      for (const r of rest) expect([200, 201, 409], JSON.stringify(r.body)).toContain(r.status)
      expect((await api.get(`/users/${u}`)).body).toMatchObject({ status: "deactivated", team_ids: [] })
      expect((await api.get(`/teams/${t2}`)).body.member_ids).not.toContain(u)
      for (const made of rest.filter((r) => r.status === 201)) {
        expectEnvelope(await call(server, "GET", "/engine/v1/me", { key: made.body.key }), 401, "invalid_license_key")
      }
      const keys = (await api.get("/license-keys?limit=100")).body.data as Array<{ user_id: string; revoked_at: string | null }>
      expect(keys.filter((k) => k.user_id === u && k.revoked_at === null)).toEqual([])
    }
  })

  it("a deactivated user's key does not authenticate even if it escaped revocation", async () => {
    const { api, user, licenseKey } = await setUp("offboard-escaped")
    const u = await user("u@escaped.dev")
    const key = await licenseKey(u)
    expect((await call(server, "GET", "/engine/v1/me", { key })).status).toBe(200)
    expect((await api.del(`/users/${u}`)).status).toBe(204)
    // As if a key had been written past the offboarding (by hand, or a bug): the user's status still decides.
    await withStore(server.databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE license_keys SET revoked_at = NULL WHERE user_id = ${u}`))
    expectEnvelope(await call(server, "GET", "/engine/v1/me", { key }), 401, "invalid_license_key")
    expectEnvelope(await signal(key), 401, "invalid_license_key")
  })
})
