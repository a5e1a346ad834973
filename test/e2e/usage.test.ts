import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { type EventSeed, hexId, seeder, type Seeder } from "../support/seed.ts"
import { expectEnvelope, get, walk } from "./activity-helpers.ts"

let server: TestServer
let seed: Seeder
let acme: Bootstrapped
let other: Bootstrapped
let live: string
let userB: string
let userC: string

const range = { from: "2025-03-01T00:00:00Z", to: "2025-03-04T00:00:00Z" }

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "usage-acme", "team")
  other = await bootstrapOrg(server.databaseUrl, "usage-other", "team")
  live = acme.api_key_live!
  const user = async (email: string) => (await call(server, "POST", "/api/v1/users", { key: live, body: { email, name: email } })).body.id as string
  userB = await user("b@usage.dev")
  userC = await user("c@usage.dev")
  // Days are counted in the org's time zone: 03:00 UTC on 1 March is 28 February in New York.
  expect((await call(server, "PATCH", "/api/v1/org", { key: live, body: { time_zone: "America/New_York" } })).status).toBe(200)

  seed = seeder(server.databaseUrl)
  const sA = hexId("sess"), sA2 = hexId("sess"), sB = hexId("sess"), sC = hexId("sess")
  const event = (e: Partial<EventSeed> & Pick<EventSeed, "ts" | "user_id" | "session_id">) => seed.event({ org_id: acme.org_id, environment: "live", ...e })
  // User A: three cheap signals in two sessions (0.1 + 0.2 + 0.3: a sum of doubles would be 0.6000000000000001).
  await event({
    user_id: acme.user_id,
    session_id: sA,
    ts: "2025-03-01T03:00:00Z",
    model: "claude-sonnet-4",
    project_id: "proj_a",
    tokens_in: 100,
    tokens_out: 10,
    cost_usd: 0.1
  })
  await event({
    user_id: acme.user_id,
    session_id: sA,
    ts: "2025-03-01T12:00:00Z",
    model: "claude-sonnet-4",
    project_id: "proj_a",
    tokens_in: 200,
    tokens_out: 20,
    cost_usd: 0.2
  })
  await event({
    user_id: acme.user_id,
    session_id: sA2,
    ts: "2025-03-02T12:00:00Z",
    model: null,
    adapter: "cursor",
    tokens_in: 0,
    tokens_out: 0,
    cost_usd: 0.3
  })
  // User B: two expensive ones, one failed.
  await event({
    user_id: userB,
    session_id: sB,
    ts: "2025-03-02T13:00:00Z",
    model: "gpt-4o",
    adapter: "cursor",
    tokens_in: 1000,
    tokens_out: 500,
    cost_usd: 1.5
  })
  await event({
    user_id: userB,
    session_id: sB,
    ts: "2025-03-02T14:00:00Z",
    model: "gpt-4o",
    adapter: "cursor",
    tokens_in: 1000,
    tokens_out: 500,
    cost_usd: 1.5,
    error_code: "rate_limited",
    // Two secrets in what a tool read: two findings.
    metadata: {
      findings: [
        { kind: "aws_access_token", where: "tool_response.stdout", fingerprint: "a".repeat(32) },
        { kind: "github_pat", where: "tool_response.stdout", fingerprint: "b".repeat(32) }
      ]
    }
  })
  // User C spends exactly as much as A, so the two tie on cost and are ordered by id.
  await event({
    user_id: userC,
    session_id: sC,
    ts: "2025-03-03T23:59:59.999Z",
    model: "claude-sonnet-4",
    project_id: "proj_b",
    tokens_in: 5,
    tokens_out: 5,
    cost_usd: 0.6,
    metadata: { findings: [{ kind: "aws_access_token", where: "prompt", fingerprint: "c".repeat(32) }] }
  })
  // Outside the range, in the test environment, and in another org: never counted.
  await event({ user_id: userC, session_id: sC, ts: "2025-03-04T00:00:00Z", cost_usd: 9 })
  await event({ user_id: userC, session_id: sC, ts: "2025-02-28T23:59:59.999Z", cost_usd: 9 })
  await seed.event({ org_id: acme.org_id, environment: "test", user_id: acme.user_id, session_id: hexId("sess"), ts: "2025-03-02T00:00:00Z", cost_usd: 9 })
  await seed.event({ org_id: other.org_id, environment: "live", user_id: other.user_id, session_id: hexId("sess"), ts: "2025-03-02T00:00:00Z", cost_usd: 9 })
})
afterAll(async () => {
  await seed?.close()
  await server?.stop()
})

const totals = { signals: 6, sessions: 4, tokens_in: 2305, tokens_out: 1035, cost_usd: 4.2, error_count: 1, secret_findings: 3 }

describe("GET /api/v1/usage", () => {
  it("by user (the default): every figure per user, most expensive first, ties by key, and totals over the range", async () => {
    const res = await get(server, live, "/api/v1/usage", range)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body).toEqual({
      group_by: "user",
      from: "2025-03-01T00:00:00.000Z",
      to: "2025-03-04T00:00:00.000Z",
      time_zone: "America/New_York",
      totals,
      data: [
        { key: userB, signals: 2, sessions: 1, tokens_in: 2000, tokens_out: 1000, cost_usd: 3, error_count: 1, secret_findings: 2 },
        ...[
          { key: acme.user_id, signals: 3, sessions: 2, tokens_in: 300, tokens_out: 30, cost_usd: 0.6, error_count: 0, secret_findings: 0 },
          { key: userC, signals: 1, sessions: 1, tokens_in: 5, tokens_out: 5, cost_usd: 0.6, error_count: 0, secret_findings: 1 }
        ].sort((x, y) => (x.key < y.key ? -1 : 1))
      ],
      cursor: "",
      has_more: false
    })
  })

  it("by model and by project: signals without one are the null group", async () => {
    const models = (await get(server, live, "/api/v1/usage", { ...range, group_by: "model" })).body
    expect(models.data.map((g: any) => [g.key, g.signals, g.cost_usd])).toEqual([
      ["gpt-4o", 2, 3],
      ["claude-sonnet-4", 3, 0.9],
      [null, 1, 0.3]
    ])
    expect(models.totals).toEqual(totals)
    const projects = (await get(server, live, "/api/v1/usage", { ...range, group_by: "project" })).body
    expect(projects.data.map((g: any) => [g.key, g.signals, g.cost_usd])).toEqual([
      [null, 3, 3.3],
      ["proj_b", 1, 0.6],
      ["proj_a", 2, 0.3]
    ])
    const adapters = (await get(server, live, "/api/v1/usage", { ...range, group_by: "adapter" })).body
    expect(adapters.data.map((g: any) => [g.key, g.signals])).toEqual([["cursor", 3], ["claude-code", 3]])
  })

  it("the events list filters by finding kind and by having findings", async () => {
    const events = async (params: Record<string, string>) => {
      const res = await get(server, live, "/api/v1/events", { ...range, ...params })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return (res.body.data as Array<any>).map((e) => [e.user_id, e.findings.map((f: any) => f.kind)])
    }
    expect(await events({ finding: "aws_access_token" })).toEqual([[userC, ["aws_access_token"]], [userB, ["aws_access_token", "github_pat"]]])
    expect(await events({ finding: "github_pat" })).toEqual([[userB, ["aws_access_token", "github_pat"]]])
    expect(await events({ has_findings: "true", user_id: userC })).toEqual([[userC, ["aws_access_token"]]])
    expect(await events({ finding: "private_key" })).toEqual([])
    expectEnvelope(await get(server, live, "/api/v1/events", { finding: "AWS keys" }), 400, "invalid_parameters")
  })

  it("by day in the org's time zone, newest first", async () => {
    const days = (await get(server, live, "/api/v1/usage", { ...range, group_by: "day" })).body
    expect(days.data.map((g: any) => [g.key, g.signals, g.cost_usd])).toEqual([
      ["2025-03-03", 1, 0.6],
      ["2025-03-02", 3, 3.3],
      ["2025-03-01", 1, 0.2],
      ["2025-02-28", 1, 0.1]
    ])
  })

  it("pages through the groups without repeating or skipping any, for every grouping", async () => {
    for (const group_by of ["user", "model", "project", "adapter", "day"]) {
      const whole = (await get(server, live, "/api/v1/usage", { ...range, group_by })).body
      const walked = await walk(server, live, "/api/v1/usage", { ...range, group_by, limit: "1" })
      expect(walked.items, group_by).toEqual(whole.data)
      for (const page of walked.pages) expect(page.totals).toEqual(totals)
    }
    // A cursor belongs to its grouping.
    const first = (await get(server, live, "/api/v1/usage", { ...range, limit: "1" })).body
    expectEnvelope(await get(server, live, "/api/v1/usage", { ...range, group_by: "model", cursor: first.cursor }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, "/api/v1/usage", { ...range, cursor: "bm90IGEgY3Vyc29y" }), 400, "invalid_parameters")
    // Crafted cursors: a key PostgreSQL cannot compare (U+0000), a day that does not exist.
    const crafted = (p: Record<string, string>) => Buffer.from(JSON.stringify(p)).toString("base64url")
    for (
      const [group_by, cursor] of [
        ["model", crafted({ g: "model", k: "a\u0000b", c: "1" })],
        ["user", crafted({ g: "user", k: "\u0000", c: "0.5" })],
        ["day", crafted({ g: "day", k: "2026-13-45" })],
        ["day", crafted({ g: "day", k: "not a date" })]
      ] as const
    ) {
      expectEnvelope(await get(server, live, "/api/v1/usage", { ...range, group_by, cursor }), 400, "invalid_parameters")
    }
  })

  it("filters by user, project, model and adapter", async () => {
    const only = async (params: Record<string, string>) => (await get(server, live, "/api/v1/usage", { ...range, ...params })).body
    expect((await only({ user_id: userB })).totals).toMatchObject({ signals: 2, cost_usd: 3 })
    expect((await only({ project_id: "proj_a", group_by: "model" })).data.map((g: any) => g.key)).toEqual(["claude-sonnet-4"])
    expect((await only({ model: "claude-sonnet-4" })).totals).toMatchObject({ signals: 3, tokens_in: 305, cost_usd: 0.9 })
    expect((await only({ adapter: "cursor", group_by: "day" })).data.map((g: any) => g.key)).toEqual(["2025-03-02"])
    expect(await only({ user_id: "user_nobody" })).toMatchObject({ data: [], totals: { signals: 0, cost_usd: 0 }, has_more: false })
  })

  it("defaults to the 30 days before now", async () => {
    const recent = new Date(Date.now() - 24 * 3600 * 1000).toISOString()
    await seed.event({ org_id: acme.org_id, environment: "live", user_id: userC, session_id: hexId("sess"), ts: recent, cost_usd: 0.25 })
    const res = await get(server, live, "/api/v1/usage")
    expect(res.status).toBe(200)
    expect(res.body.totals).toMatchObject({ signals: 1, cost_usd: 0.25 })
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(30 * 24 * 3600 * 1000)
  })

  it("refuses a range that ends before it starts, an unknown grouping, and a key without events:read", async () => {
    expectEnvelope(await get(server, live, "/api/v1/usage", { from: range.to, to: range.from }), 422, "validation_error")
    expectEnvelope(await get(server, live, "/api/v1/usage", { from: range.from, to: range.from }), 422, "validation_error")
    expectEnvelope(await get(server, live, "/api/v1/usage", { group_by: "team" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, "/api/v1/usage", { from: "yesterday" }), 400, "invalid_parameters")
    const rulesOnly = await call(server, "POST", "/api/v1/api-keys", { key: live, body: { name: "rules only", scopes: ["rules:read"] } })
    expect(rulesOnly.status).toBeLessThan(300)
    expectEnvelope(await get(server, rulesOnly.body.key, "/api/v1/usage", range), 403, "insufficient_scope")
    expect((await get(server, "sek_live_00000000000000000000000000000000", "/api/v1/usage", range)).status).toBe(401)
  })
})
