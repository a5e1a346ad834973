import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"

let server: TestServer
let org: Bootstrapped
let other: Bootstrapped
let projectId: string

beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "rules", "team")
  other = await bootstrapOrg(server.databaseUrl, "rival", "team")
  projectId = (await call(server, "POST", "/api/v1/projects", { key: org.api_key_live!, body: { name: "web" } })).body.id
})
afterAll(() => server?.stop())

const post = (body: unknown, key = org.api_key_live!) => call(server, "POST", "/api/v1/rules", { key, body })

const valid = () => ({
  budget: {
    name: "Team daily spend",
    type: "budget",
    scope: "team",
    scope_id: org.team_id,
    priority: 10,
    condition: { window: "daily", metric: "cost_usd", threshold: 50 },
    action: "block",
    action_config: { message: "Daily budget reached" }
  },
  model_filter: {
    name: "No o3",
    type: "model_filter",
    scope: "org",
    scope_id: org.org_id,
    condition: { model: { in: ["o3"] } },
    action: "warn"
  },
  allowlist: {
    name: "Only Claude",
    type: "model_filter",
    scope: "project",
    scope_id: projectId,
    condition: { model: { not_in: ["claude-sonnet-4", "claude-opus-4"] } },
    action: "log"
  },
  user_limit: {
    name: "Per-user tokens",
    type: "user_limit",
    scope: "org",
    scope_id: org.org_id,
    condition: { window: "monthly", metric: "tokens_total", per_user: 5_000_000 },
    action: "notify"
  },
  org_policy: {
    name: "Projects required",
    type: "org_policy",
    scope: "user",
    scope_id: org.user_id,
    condition: { require_project_id: true, block_unknown_models: false },
    action: "block",
    action_config: { message: "Set a project id" }
  },
  tool_policy: {
    name: "No destructive shell",
    type: "org_policy",
    scope: "org",
    scope_id: org.org_id,
    condition: { blocked_tools: ["mcp__*", "WebFetch"], blocked_commands: ["rm -rf", "curl * | sh"], blocked_mcp_servers: ["github"] },
    action: "block",
    action_config: { message: "Not allowed in this org" }
  }
})

describe("rules API", () => {
  it("creates each rule type on each scope and reads it back", async () => {
    for (const [name, body] of Object.entries(valid())) {
      const created = await post(body)
      expect(created.status, name).toBe(201)
      expect(created.body.id).toMatch(/^rule_[0-9a-f]{32}$/)
      expect(created.body).toMatchObject({ ...body, enabled: true })
      expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT/)
      const got = await call(server, "GET", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })
      expect(got.body).toEqual(created.body)
    }
  })

  it("defaults priority to 100 and action_config to {}", async () => {
    const created = await post(valid().model_filter)
    expect(created.body.priority).toBe(100)
    expect(created.body.action_config).toEqual({})
  })

  it.each(
    [
      ["POST", "an unknown field", { enabeld: false }],
      ["PUT", "an unknown field", { enabeld: false }],
      ["PUT", "a null enabled", { enabled: null }],
      ["PUT", "a null condition", { condition: null }],
      ["PUT", "the read-only id", { id: "rule_x" }]
    ] as const
  )("%s with %s is 400 invalid_parameters and changes nothing", async (method, _what, extra) => {
    const created = await post(valid().budget)
    const res = method === "POST"
      ? await post({ ...valid().budget, ...extra })
      : await call(server, "PUT", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live!, body: extra })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_parameters")
    expect((await call(server, "GET", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })).body).toEqual(created.body)
  })

  it("PUT changes only the fields sent, enables and disables, and moves updated_at", async () => {
    const created = await post(valid().budget)
    const disabled = await call(server, "PUT", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live!, body: { enabled: false } })
    expect(disabled.status).toBe(200)
    expect(disabled.body).toEqual({ ...created.body, enabled: false, updated_at: disabled.body.updated_at })
    expect(Date.parse(disabled.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at))
    const enabled = await call(server, "PUT", `/api/v1/rules/${created.body.id}`, {
      key: org.api_key_live!,
      body: { enabled: true, condition: { window: "monthly", metric: "tokens_in", threshold: 1_000 } }
    })
    expect(enabled.body).toMatchObject({ enabled: true, condition: { window: "monthly", metric: "tokens_in", threshold: 1_000 }, name: "Team daily spend" })
  })

  it("DELETE answers 204, then the rule is gone", async () => {
    const created = await post(valid().user_limit)
    const deleted = await call(server, "DELETE", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })
    expect(deleted.status).toBe(204)
    expect((await call(server, "GET", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })).status).toBe(404)
    expect((await call(server, "DELETE", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })).status).toBe(404)
  })

  it("lists with filters and pages", async () => {
    const fresh = await bootstrapOrg(server.databaseUrl, "lists", "team")
    const mk = (over: Record<string, unknown>) =>
      post({
        name: "r",
        type: "model_filter",
        scope: "org",
        scope_id: fresh.org_id,
        condition: { model: { in: ["o3"] } },
        action: "log",
        ...over
      }, fresh.api_key_live!)
    const ids = []
    for (let i = 0; i < 5; i++) ids.push((await mk({ name: `r${i}`, enabled: i % 2 === 0 })).body.id)
    ids.push(
      (await mk({ type: "budget", condition: { window: "daily", metric: "tokens_total", threshold: 5 }, scope: "user", scope_id: fresh.user_id })).body.id
    )
    const list = async (q: string) => (await call(server, "GET", `/api/v1/rules?${q}`, { key: fresh.api_key_live! })).body
    expect((await list("limit=100")).data.map((r: { id: string }) => r.id)).toEqual([...ids].reverse())
    expect((await list("type=budget")).data.map((r: { id: string }) => r.id)).toEqual([ids[5]])
    expect((await list("scope=user")).data.map((r: { id: string }) => r.id)).toEqual([ids[5]])
    expect((await list(`scope_id=${fresh.user_id}`)).data).toHaveLength(1)
    expect((await list("enabled=false")).data.map((r: { id: string }) => r.id)).toEqual([ids[3], ids[1]])
    const first = await list("limit=4")
    expect(first.has_more).toBe(true)
    const second = await list(`limit=4&cursor=${first.cursor}`)
    expect([...first.data, ...second.data].map((r: { id: string }) => r.id)).toEqual([...ids].reverse())
    expect(second.has_more).toBe(false)
    for (const bad of ["type=nope", "scope=galaxy", "enabled=yes", "limit=0"]) {
      const res = await call(server, "GET", `/api/v1/rules?${bad}`, { key: fresh.api_key_live! })
      expect(res.status, bad).toBe(400)
    }
  })

  it("is confined to the caller's org and environment", async () => {
    const mine = await post(valid().model_filter)
    for (const key of [other.api_key_live!, org.api_key_test]) {
      expect((await call(server, "GET", `/api/v1/rules/${mine.body.id}`, { key })).status).toBe(404)
      expect((await call(server, "PUT", `/api/v1/rules/${mine.body.id}`, { key, body: { enabled: false } })).status).toBe(404)
      expect((await call(server, "DELETE", `/api/v1/rules/${mine.body.id}`, { key })).status).toBe(404)
      const listed = await call(server, "GET", "/api/v1/rules?limit=100", { key })
      expect(listed.body.data.map((r: { id: string }) => r.id)).not.toContain(mine.body.id)
    }
    // Another org's ids are not valid scope ids.
    const res = await post({ ...valid().org_policy, scope_id: other.user_id })
    expect(res.status).toBe(422)
  })

  it("needs the rules scope", async () => {
    const reader = await call(server, "POST", "/api/v1/api-keys", { key: org.api_key_live!, body: { name: "ro", scopes: ["rules:read"] } })
    expect((await call(server, "GET", "/api/v1/rules", { key: reader.body.key })).status).toBe(200)
    const res = await post(valid().model_filter, reader.body.key)
    expect(res.status).toBe(403)
    expect(res.body.code).toBe("insufficient_scope")
  })
})

describe("rule validation", () => {
  const base = () => valid().budget
  const without = (key: string) => Object.fromEntries(Object.entries(base()).filter(([k]) => k !== key))
  it.each([
    ["no name", () => without("name")],
    ["no condition", () => without("condition")],
    ["no scope_id", () => without("scope_id")],
    ["an unknown type", () => ({ ...base(), type: "vibes" })],
    ["an unknown scope", () => ({ ...base(), scope: "galaxy" })],
    ["an unknown action", () => ({ ...base(), action: "explode" })],
    ["a non-integer priority", () => ({ ...base(), priority: 1.5 })],
    ["a condition that is not an object", () => ({ ...base(), condition: [1] })]
  ])("400 for %s", async (_what, body) => {
    const res = await post(body())
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_parameters")
  })

  it.each([
    ["budget with an unknown key", "budget", { window: "daily", metric: "cost_usd", threshold: 5, extra: 1 }],
    ["budget with a bad window", "budget", { window: "hourly", metric: "cost_usd", threshold: 5 }],
    ["budget with a bad metric", "budget", { window: "daily", metric: "vibes", threshold: 5 }],
    ["model_filter with both lists", "model_filter", { model: { in: ["a"], not_in: ["b"] } }],
    ["model_filter with no list", "model_filter", { model: {} }],
    ["user_limit with a budget metric", "user_limit", { window: "daily", metric: "tokens_in", per_user: 5 }],
    ["user_limit with a threshold key", "user_limit", { window: "daily", metric: "cost_usd", threshold: 5 }],
    ["org_policy with a string flag", "org_policy", { require_project_id: "yes" }],
    ["org_policy with blocked_tools not a list", "org_policy", { blocked_tools: "Bash" }],
    ["org_policy with a number among blocked_commands", "org_policy", { blocked_commands: ["rm -rf", 5] }],
    ["org_policy with an unknown list", "org_policy", { blocked_files: ["/etc/passwd"] }]
  ])("400 invalid_condition for %s", async (_what, type, condition) => {
    const res = await post({ ...base(), type, condition, action: "log" })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_condition")
  })

  it.each([
    ["a threshold of 1e308", "budget", { window: "daily", metric: "cost_usd", threshold: 1e308 }, "threshold"],
    ["a per_user over 1e15", "user_limit", { window: "daily", metric: "tokens_total", per_user: 2e15 }, "per_user"],
    ["1,001 models", "model_filter", { model: { in: Array.from({ length: 1_001 }, (_, i) => `m${i}`) } }, "in"],
    ["a model name over 200 characters", "model_filter", { model: { not_in: ["m".repeat(201)] } }, "not_in"]
  ])("400 invalid_condition naming the field for %s", async (_what, type, condition, field) => {
    const res = await post({ ...base(), type, condition, action: "log" })
    expect(res.status).toBe(400)
    expect(res.body.code).toBe("invalid_condition")
    expect(res.body.error).toContain(field)
  })

  it("accepts the bounds themselves", async () => {
    const res = await post({
      ...base(),
      condition: { window: "daily", metric: "tokens_total", threshold: 1e15 },
      action_config: { message: "m".repeat(2_000) }
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const models = await post({
      ...base(),
      type: "model_filter",
      condition: { model: { in: Array.from({ length: 1_000 }, (_, i) => `m${i}`.padEnd(200, "x")) } }
    })
    expect(models.status, JSON.stringify(models.body)).toBe(201)
  })

  it.each([
    ["a threshold of 0", { condition: { window: "daily", metric: "cost_usd", threshold: 0 } }, "condition.threshold"],
    ["a negative per_user", { type: "user_limit", condition: { window: "daily", metric: "cost_usd", per_user: -1 } }, "condition.per_user"],
    ["an empty blocklist", { type: "model_filter", condition: { model: { in: [] } } }, "condition.model.in"],
    ["an org_policy that enables nothing", { type: "org_policy", condition: { require_project_id: false } }, "org_policy"],
    ["an empty blocked_tools", { type: "org_policy", condition: { blocked_tools: [] } }, "condition.blocked_tools"],
    ["a blank blocked command", { type: "org_policy", condition: { blocked_commands: ["rm -rf", "  "] } }, "condition.blocked_commands"],
    ["a command pattern of * alone", { type: "org_policy", condition: { blocked_commands: ["* *"] } }, "condition.blocked_commands"],
    ["a blank MCP server", { type: "org_policy", condition: { blocked_mcp_servers: [""] } }, "condition.blocked_mcp_servers"],
    ["101 blocked tools", { type: "org_policy", condition: { blocked_tools: Array.from({ length: 101 }, (_, i) => `t${i}`) } }, "condition.blocked_tools"],
    ["a command pattern over 200 characters", { type: "org_policy", condition: { blocked_commands: ["x".repeat(201)] } }, "condition.blocked_commands"],
    ["block without a message", { action_config: {} }, "action_config.message"],
    ["a block message of 900 KB", { action_config: { message: "x".repeat(900_000) } }, "action_config.message"],
    ["an action_config over 8 KB", { action_config: { message: "no", extra: "x".repeat(8_200) } }, "action_config"],
    ["an unknown user", { scope: "user", scope_id: "user_nobody" }, "scope_id"],
    ["an unknown team", { scope: "team", scope_id: "team_nobody" }, "scope_id"],
    ["a blank project_id", { scope: "project", scope_id: "  " }, "scope_id"],
    ["a project_id over 200 characters", { scope: "project", scope_id: "p".repeat(201) }, "scope_id"],
    ["another org as org scope", { scope: "org", scope_id: "org_someone_else" }, "scope_id"]
  ])("422 for %s, naming the field", async (_what, over, field) => {
    const res = await post({ ...base(), ...over })
    expect(res.status).toBe(422)
    expect(res.body.code).toBe("validation_error")
    expect(res.body.error).toContain(field)
  })

  it("lists every offending field at once", async () => {
    const res = await post({
      ...base(),
      scope: "user",
      scope_id: "user_nobody",
      condition: { window: "daily", metric: "cost_usd", threshold: -5 },
      action_config: {}
    })
    expect(res.status).toBe(422)
    for (const field of ["condition.threshold", "action_config.message", "scope_id"]) expect(res.body.error).toContain(field)
  })

  it("PUT validates the rule it would produce", async () => {
    const created = await post(base())
    // The stored budget condition does not fit the new type: the body is valid by the document, the rule it makes is not.
    const typeOnly = await call(server, "PUT", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live!, body: { type: "model_filter" } })
    expect(typeOnly.status).toBe(422)
    expect(typeOnly.body.code).toBe("invalid_condition")
    const both = await call(server, "PUT", `/api/v1/rules/${created.body.id}`, {
      key: org.api_key_live!,
      body: { type: "model_filter", condition: { window: "daily", metric: "cost_usd", threshold: 5 } }
    })
    expect(both.status).toBe(400)
    expect(both.body.code).toBe("invalid_condition")
    const noMessage = await call(server, "PUT", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live!, body: { action_config: {} } })
    expect(noMessage.status).toBe(422)
    const unchanged = await call(server, "GET", `/api/v1/rules/${created.body.id}`, { key: org.api_key_live! })
    expect(unchanged.body).toEqual(created.body)
  })
})
