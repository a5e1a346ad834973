import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { expectEnvelope, get, walk } from "./activity-helpers.ts"

/**
 * GET /api/v1/budgets: where each budget and per-user limit stands in its current window, from
 * signals ingested through the engine API (the counters the rules themselves compare).
 */
let server: TestServer
let acme: Bootstrapped
let live: string
const timeZone = "Pacific/Kiritimati" // UTC+14 all year: the org's day is not the UTC day
const users: Record<"a" | "b" | "c", { id: string; key: string }> = {} as never
let teamId: string
const ruleIds = {} as Record<"org" | "team" | "project" | "user" | "perUser" | "teamPerUser", string>
let projectCost: number

const localDay = (at: Date) => new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(at)

const signal = (key: string, metadata: Record<string, unknown>) =>
  call(server, "POST", "/engine/v1/signals", { key, body: { type: "post-tool", adapter: "cursor", session_id: "s", metadata } })

const rule = async (body: Record<string, unknown>) => {
  const res = await call(server, "POST", "/api/v1/rules", { key: live, body: { action: "log", ...body } })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.id as string
}

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "budgets-acme", "team")
  live = acme.api_key_live!
  expect((await call(server, "PATCH", "/api/v1/org", { key: live, body: { time_zone: timeZone } })).status).toBe(200)
  const team = await call(server, "POST", "/api/v1/teams", { key: live, body: { name: "Platform" } })
  teamId = team.body.id
  for (const [name, inTeam] of [["a", true], ["b", true], ["c", false]] as const) {
    const user = await call(server, "POST", "/api/v1/users", {
      key: live,
      body: { email: `${name}@budgets.dev`, name, team_ids: inTeam ? [teamId] : [] }
    })
    expect(user.status).toBe(201)
    const license = await call(server, "POST", "/api/v1/license-keys", { key: live, body: { user_id: user.body.id } })
    users[name] = { id: user.body.id, key: license.body.key }
  }
  ruleIds.org = await rule({
    name: "org tokens",
    type: "budget",
    scope: "org",
    scope_id: acme.org_id,
    condition: { window: "daily", metric: "tokens_total", threshold: 1000 }
  })
  ruleIds.team = await rule({
    name: "team input",
    type: "budget",
    scope: "team",
    scope_id: teamId,
    condition: { window: "monthly", metric: "tokens_in", threshold: 500 }
  })
  ruleIds.project = await rule({
    name: "repo-x cost",
    type: "budget",
    scope: "project",
    scope_id: "repo-x",
    condition: { window: "daily", metric: "cost_usd", threshold: 0.001 },
    action: "warn"
  })
  ruleIds.user = await rule({
    name: "a output",
    type: "budget",
    scope: "user",
    scope_id: users.a.id,
    condition: { window: "daily", metric: "tokens_out", threshold: 50 }
  })
  ruleIds.perUser = await rule({
    name: "per user",
    type: "user_limit",
    scope: "org",
    scope_id: acme.org_id,
    condition: { window: "daily", metric: "tokens_total", per_user: 400 }
  })
  ruleIds.teamPerUser = await rule({
    name: "team per user",
    type: "user_limit",
    scope: "team",
    scope_id: teamId,
    condition: { window: "monthly", metric: "tokens_total", per_user: 100 },
    enabled: false
  })
  // Not a budget: never listed.
  await rule({ name: "no gpt", type: "model_filter", scope: "org", scope_id: acme.org_id, condition: { model: { in: ["gpt-4o"] } } })

  const answers = [
    await signal(users.a.key, { model: "claude-sonnet-4", tokens_in: 300, tokens_out: 50, project_id: "repo-x" }),
    await signal(users.b.key, { tokens_in: 100, tokens_out: 10 }),
    await signal(users.c.key, { tokens_in: 200, tokens_out: 0 })
  ]
  // Answered with a session: processed and committed, so the counters hold them.
  for (const a of answers) expect(a.body, JSON.stringify(a.body)).toMatchObject({ ok: true, session_id: expect.any(String) })
  const usage = await get(server, live, "/api/v1/usage", {
    group_by: "project",
    from: new Date(Date.now() - 86_400_000).toISOString(),
    to: new Date(Date.now() + 60_000).toISOString()
  })
  projectCost = usage.body.data.find((g: any) => g.key === "repo-x").cost_usd
  expect(projectCost).toBeGreaterThan(0.001)
})
afterAll(() => server?.stop())

describe("GET /api/v1/budgets", () => {
  it("every budget and per-user limit with its current figure, percent and state; other rules are not listed", async () => {
    const before = localDay(new Date())
    const res = await get(server, live, "/api/v1/budgets", { limit: "100" })
    const after = localDay(new Date())
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.has_more).toBe(false)
    const byId = new Map<string, any>(res.body.data.map((b: any) => [b.rule_id, b]))
    expect([...byId.keys()].sort()).toEqual(Object.values(ruleIds).sort())

    const day = [before, after].find((d) => byId.get(ruleIds.org).window_start === new Date(`${d}T00:00:00+14:00`).toISOString())
    expect(day, "the daily window starts at the org's local midnight").toBeDefined()
    const month = day!.slice(0, 7)
    const next = (d: string, plus: { days?: number; months?: number }) => {
      const [y, m, dd] = d.split("-").map(Number) as [number, number, number]
      return new Date(Date.UTC(y, m - 1 + (plus.months ?? 0), dd + (plus.days ?? 0)) - 14 * 3_600_000).toISOString()
    }
    const daily = { window: "daily", window_start: next(day!, {}), window_end: next(day!, { days: 1 }) }
    const monthly = { window: "monthly", window_start: next(`${month}-01`, {}), window_end: next(`${month}-01`, { months: 1 }) }

    expect(byId.get(ruleIds.org)).toEqual({
      rule_id: ruleIds.org,
      name: "org tokens",
      type: "budget",
      enabled: true,
      action: "log",
      scope: "org",
      scope_id: acme.org_id,
      ...daily,
      metric: "tokens_total",
      limit: 1000,
      current: 660,
      percent: 66,
      state: "ok"
    })
    // The team's members only (c is not in it): 300 + 100 of 500 is 80%.
    expect(byId.get(ruleIds.team)).toMatchObject({ ...monthly, metric: "tokens_in", limit: 500, current: 400, percent: 80, state: "warning" })
    // The project's cost as the usage report sums it.
    expect(byId.get(ruleIds.project)).toMatchObject({
      ...daily,
      action: "warn",
      metric: "cost_usd",
      limit: 0.001,
      current: projectCost,
      state: "exceeded",
      percent: Math.round(projectCost / 0.001 * 1000) / 10
    })
    // At the limit is exceeded: the rule acts on the next signal.
    expect(byId.get(ruleIds.user)).toMatchObject({ scope: "user", scope_id: users.a.id, current: 50, percent: 100, state: "exceeded" })
    for (const id of [ruleIds.org, ruleIds.team, ruleIds.project, ruleIds.user]) {
      expect(Object.keys(byId.get(id))).not.toContain("top_user_id")
    }
    // Per user: a 350, b 110, c 200 of 400 each.
    expect(byId.get(ruleIds.perUser)).toEqual({
      rule_id: ruleIds.perUser,
      name: "per user",
      type: "user_limit",
      enabled: true,
      action: "log",
      scope: "org",
      scope_id: acme.org_id,
      ...daily,
      metric: "tokens_total",
      limit: 400,
      current: 350,
      percent: 87.5,
      state: "warning",
      users_warning: 1,
      users_exceeded: 0,
      top_user_id: users.a.id
    })
    // A disabled limit is listed with its figures too; the team's members only.
    expect(byId.get(ruleIds.teamPerUser)).toMatchObject({
      enabled: false,
      ...monthly,
      limit: 100,
      current: 350,
      state: "exceeded",
      users_warning: 0,
      users_exceeded: 2,
      top_user_id: users.a.id
    })
  })

  it("follows new signals: the next one moves the figures", async () => {
    expect((await signal(users.c.key, { tokens_in: 250 })).body).toMatchObject({ ok: true, session_id: expect.any(String) })
    const res = await get(server, live, "/api/v1/budgets", { type: "user_limit", scope: "org" })
    expect(res.body.data).toEqual([
      expect.objectContaining({ rule_id: ruleIds.perUser, current: 450, state: "exceeded", users_warning: 1, users_exceeded: 1, top_user_id: users.c.id })
    ])
    const org = (await get(server, live, "/api/v1/budgets", { scope: "org", type: "budget" })).body.data
    expect(org.map((b: any) => [b.rule_id, b.current])).toEqual([[ruleIds.org, 910]])
  })

  it("filters and pages like the rules list: every budget once", async () => {
    const walked = await walk(server, live, "/api/v1/budgets", { limit: "2" })
    expect(walked.items.map((b: any) => b.rule_id).sort()).toEqual(Object.values(ruleIds).sort())
    expect(walked.pages).toHaveLength(3)
    const disabled = await get(server, live, "/api/v1/budgets", { enabled: "false" })
    expect(disabled.body.data.map((b: any) => b.rule_id)).toEqual([ruleIds.teamPerUser])
    const team = await get(server, live, "/api/v1/budgets", { scope: "team", scope_id: teamId })
    expect(team.body.data.map((b: any) => b.rule_id).sort()).toEqual([ruleIds.team, ruleIds.teamPerUser].sort())
  })

  it("an environment sees its own budgets only; a user without usage in the window counts nothing", async () => {
    expect((await get(server, live, "/api/v1/budgets", {})).body.data.length).toBe(6)
    const test = await get(server, acme.api_key_test, "/api/v1/budgets", {})
    expect(test.status).toBe(200)
    expect(test.body.data).toEqual([])
    // A test-environment budget over the same org has seen none of the live signals.
    const created = await call(server, "POST", "/api/v1/rules", {
      key: acme.api_key_test,
      body: {
        name: "test org",
        type: "budget",
        scope: "org",
        scope_id: acme.org_id,
        condition: { window: "daily", metric: "tokens_total", threshold: 10 },
        action: "log"
      }
    })
    expect(created.status).toBe(201)
    expect((await get(server, acme.api_key_test, "/api/v1/budgets", {})).body.data).toEqual([
      expect.objectContaining({ rule_id: created.body.id, current: 0, percent: 0, state: "ok" })
    ])
  })

  it("bad parameters, keys and scopes get the error envelope", async () => {
    expectEnvelope(await get(server, live, "/api/v1/budgets", { limit: "0" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, "/api/v1/budgets", { limit: "101" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, "/api/v1/budgets", { type: "model_filter" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, "/api/v1/budgets", { cursor: "not-a-cursor" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, users.a.key, "/api/v1/budgets", {}), 401, "invalid_api_key")
    const eventsOnly = await call(server, "POST", "/api/v1/api-keys", { key: live, body: { name: "events", scopes: ["events:read"] } })
    expect(eventsOnly.status).toBe(201)
    expectEnvelope(await get(server, eventsOnly.body.key, "/api/v1/budgets", {}), 403, "insufficient_scope")
    const rulesOnly = await call(server, "POST", "/api/v1/api-keys", { key: live, body: { name: "rules", scopes: ["rules:read"] } })
    expect((await get(server, rulesOnly.body.key, "/api/v1/budgets", {})).status).toBe(200)
  })
})
