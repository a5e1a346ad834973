import { parse } from "csv-parse/sync"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { type EventSeed, hexId, seeder, type Seeder } from "../support/seed.ts"
import { waitFor } from "../support/wait.ts"
import { expectEnvelope, get } from "./activity-helpers.ts"

let server: TestServer
let seed: Seeder
let acme: Bootstrapped
let other: Bootstrapped
let live: string
let userB: string
let teamId: string

// Names a spreadsheet has to get right: a comma, quotes, a line break, a formula, non-ASCII.
const awkwardUser = "Doe, \"Jane\"\nSr."
const formulaUser = "=HYPERLINK(\"http://x\")"
const awkwardTeam = "R&D, \"Platform\""
const awkwardProject = "Straße \"Nord\", v2"

const range = { from: "2025-03-01T00:00:00Z", to: "2025-03-04T00:00:00Z" }

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "export-acme", "team")
  other = await bootstrapOrg(server.databaseUrl, "export-other", "team")
  live = acme.api_key_live!
  const created = async (path: string, body: unknown) => {
    const res = await call(server, "POST", path, { key: live, body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.id as string
  }
  userB = await created("/api/v1/users", { email: "b@export.dev", name: awkwardUser })
  const userC = await created("/api/v1/users", { email: "c@export.dev", name: formulaUser })
  teamId = await created("/api/v1/teams", { name: awkwardTeam, member_ids: [acme.user_id, userB] })
  const projectId = await created("/api/v1/projects", { name: awkwardProject })
  // Days are counted in the org's time zone: 03:00 UTC on 1 March is 28 February in New York.
  expect((await call(server, "PATCH", "/api/v1/org", { key: live, body: { time_zone: "America/New_York" } })).status).toBe(200)

  seed = seeder(server.databaseUrl)
  const sA = hexId("sess"), sB = hexId("sess"), sC = hexId("sess")
  const event = (e: Partial<EventSeed> & Pick<EventSeed, "ts" | "user_id" | "session_id">) => seed.event({ org_id: acme.org_id, environment: "live", ...e })
  const sonnet = { model: "claude-sonnet-4", project_id: projectId }
  // The range's first instant is in it (28 February in New York); its last is not.
  await event({ user_id: acme.user_id, session_id: sA, ts: range.from, ...sonnet, tokens_in: 100, tokens_out: 10, cost_usd: 0.1 })
  await event({ user_id: acme.user_id, session_id: sA, ts: "2025-03-01T12:00:00Z", ...sonnet, tokens_in: 200, tokens_out: 20, cost_usd: 0.2 })
  await event({ user_id: acme.user_id, session_id: sA, ts: "2025-03-01T13:00:00Z", ...sonnet, tokens_in: 300, tokens_out: 30, cost_usd: 0.3 })
  await event({ user_id: userB, session_id: sB, ts: "2025-03-02T13:00:00Z", model: "gpt-4o", tokens_in: 1000, tokens_out: 500, cost_usd: 1.5 })
  await event({
    user_id: userB,
    session_id: sB,
    ts: "2025-03-02T14:00:00Z",
    model: "gpt-4o",
    tokens_in: 1000,
    tokens_out: 500,
    cost_usd: 1.5,
    error_code: "rate_limited"
  })
  await event({ user_id: userC, session_id: sC, ts: "2025-03-03T23:59:59.999Z", model: null, tokens_in: 5, tokens_out: 5, cost_usd: 0.6 })
  // Outside the range, in the test environment, and in another org: never exported.
  await event({ user_id: userC, session_id: sC, ts: range.to, cost_usd: 9 })
  await event({ user_id: userC, session_id: sC, ts: "2025-02-28T23:59:59.999Z", cost_usd: 9 })
  await seed.event({ org_id: acme.org_id, environment: "test", user_id: acme.user_id, session_id: hexId("sess"), ts: "2025-03-02T00:00:00Z", cost_usd: 9 })
  await seed.event({ org_id: other.org_id, environment: "live", user_id: other.user_id, session_id: hexId("sess"), ts: "2025-03-02T00:00:00Z", cost_usd: 9 })
})
afterAll(async () => {
  await seed?.close()
  await server?.stop()
})

const download = async (params: Record<string, string>, key = live) => {
  const res = await fetch(`${server.baseUrl}/api/v1/usage/export?${new URLSearchParams(params)}`, { headers: { authorization: `Bearer ${key}` } })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

/** A CSV export parsed as a spreadsheet would read it: a record per row, by the header's names. */
const csvRows = async (params: Record<string, string>): Promise<Array<Record<string, string>>> => {
  const res = await download(params)
  expect(res.status, res.text).toBe(200)
  return parse(res.text, { columns: true }) as Array<Record<string, string>>
}

const sum = (rows: ReadonlyArray<Record<string, string>>, column: string) => rows.reduce((s, r) => s + Number(r[column]), 0)

describe("GET /api/v1/usage/export", () => {
  it("CSV by day, user, project and model: a header, every row, names quoted, sums equal to the events written", async () => {
    const res = await download(range)
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    expect(res.headers.get("content-disposition")).toBe("attachment; filename=\"usage-2025-03-01-to-2025-03-04.csv\"")
    expect(res.headers.get("x-request-id")).toMatch(/^req_/)
    const rows = parse(res.text, { columns: true }) as Array<Record<string, string>>
    expect(Object.keys(rows[0]!)).toEqual([
      "day",
      "user_id",
      "user_email",
      "user_name",
      "project_id",
      "project_name",
      "model",
      "signals",
      "sessions",
      "tokens_in",
      "tokens_out",
      "cost_usd",
      "error_count"
    ])
    expect(rows.map((r) => [r.day, r.user_name, r.project_name, r.model, r.signals, r.tokens_in, r.cost_usd, r.error_count])).toEqual([
      ["2025-02-28", "Admin", awkwardProject, "claude-sonnet-4", "1", "100", "0.1", "0"],
      ["2025-03-01", "Admin", awkwardProject, "claude-sonnet-4", "2", "500", "0.5", "0"],
      ["2025-03-02", awkwardUser, "", "gpt-4o", "2", "2000", "3", "1"],
      ["2025-03-03", `'${formulaUser}`, "", "", "1", "5", "0.6", "0"]
    ])
    expect({ signals: sum(rows, "signals"), tokens_out: sum(rows, "tokens_out"), cost: Math.round(sum(rows, "cost_usd") * 1e9) / 1e9 })
      .toEqual({ signals: 6, tokens_out: 1065, cost: 4.2 })
    // The same totals as the usage report over the same range.
    const report = await get(server, live, "/api/v1/usage", range)
    expect(report.body.totals).toMatchObject({ signals: 6, tokens_out: 1065, cost_usd: 4.2 })
  })

  it("JSON lines: one object a line, every column, null where a row has none", async () => {
    // Dimensions come in their own order, whatever the request's (a repeated one counts once).
    const res = await download({ ...range, format: "jsonl", group_by: "model,user,model" })
    expect(res.status, res.text).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/x-ndjson")
    expect(res.text.endsWith("\n")).toBe(true)
    const lines = res.text.trimEnd().split("\n").map((l) => JSON.parse(l))
    expect(Object.keys(lines[0])).toEqual(["user_id", "user_email", "user_name", "model", "signals", "sessions", "tokens_in", "tokens_out", "cost_usd",
      "error_count"])
    expect(lines).toContainEqual({
      user_id: userB,
      user_email: "b@export.dev",
      user_name: awkwardUser,
      model: "gpt-4o",
      signals: 2,
      sessions: 1,
      tokens_in: 2000,
      tokens_out: 1000,
      cost_usd: 3,
      error_count: 1
    })
    expect(lines.find((l) => l.model === null)).toMatchObject({ user_name: formulaUser, signals: 1 })
    expect(lines).toHaveLength(3)
  })

  it("by team: users are counted in each of their teams, those in none under an empty team", async () => {
    // The admin is in the org's Default team and in this one; user B in this one; user C in none.
    const rows = await csvRows({ ...range, group_by: "team" })
    expect(rows[0]).toMatchObject({ team_id: "", team_name: "", signals: "1", cost_usd: "0.6" })
    expect(rows.slice(1).map((r) => [r.team_name, r.signals, r.cost_usd]).sort()).toEqual([
      ["Default", "3", "0.6"],
      [awkwardTeam, "5", "3.6"]
    ])
    const byTeamOnly = await csvRows({ ...range, group_by: "day", team_id: teamId })
    expect(sum(byTeamOnly, "signals")).toBe(5)
  })

  it("filters by user, team, project and model", async () => {
    expect(sum(await csvRows({ ...range, user_id: userB }), "cost_usd")).toBe(3)
    expect(sum(await csvRows({ ...range, model: "gpt-4o", group_by: "user" }), "signals")).toBe(2)
    const project = await csvRows({ ...range, group_by: "project" })
    expect(project.map((r) => [r.project_name, r.signals])).toEqual([["", "3"], [awkwardProject, "3"]])
    expect(sum(await csvRows({ ...range, project_id: project[1]!.project_id! }), "signals")).toBe(3)
    expect(await csvRows({ ...range, team_id: "team_nobody" })).toEqual([])
    // No rows is still a file with its header.
    const empty = await download({ ...range, user_id: "user_nobody", group_by: "day" })
    expect(empty.text).toBe("day,signals,sessions,tokens_in,tokens_out,cost_usd,error_count\n")
  })

  it("a period's boundaries: from is in it, to is not", async () => {
    const first = await csvRows({ from: range.from, to: "2025-03-01T00:00:00.001Z", group_by: "user" })
    expect(first.map((r) => [r.user_id, r.signals])).toEqual([[acme.user_id, "1"]])
    const last = await csvRows({ from: "2025-03-03T23:59:59.999Z", to: range.to, group_by: "user" })
    expect(last.map((r) => r.signals)).toEqual(["1"])
    expect(await csvRows({ from: range.to, to: "2025-03-04T00:00:00.001Z", group_by: "user" })).toHaveLength(1)
  })

  it("another org's and the other environment's events are never included", async () => {
    const all = await csvRows({ from: "2025-01-01", to: "2025-12-31", group_by: "user" })
    expect(all.map((r) => r.user_id).sort()).not.toContain(other.user_id)
    expect(sum(all, "cost_usd")).toBeCloseTo(4.2 + 18, 9)
    const theirs = await download({ from: "2025-01-01", to: "2025-12-31", group_by: "user" }, other.api_key_live!)
    expect(parse(theirs.text, { columns: true })).toEqual([expect.objectContaining({ user_id: other.user_id, cost_usd: "9" })])
    const test = await download({ from: "2025-01-01", to: "2025-12-31", group_by: "user" }, acme.api_key_test!)
    expect(parse(test.text, { columns: true })).toEqual([expect.objectContaining({ user_id: acme.user_id, cost_usd: "9" })])
  })

  it("bad parameters get the error envelope", async () => {
    const path = "/api/v1/usage/export"
    expectEnvelope(await get(server, live, path, { ...range, format: "xlsx" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, path, { ...range, group_by: "week" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, path, { ...range, group_by: "day, user" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, path, { ...range, group_by: "" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, path, { from: "last month" }), 400, "invalid_parameters")
    expectEnvelope(await get(server, live, path, { from: range.to, to: range.from }), 422, "validation_error")
    expectEnvelope(await get(server, live, path, { from: range.from, to: range.from }), 422, "validation_error")
    const rulesOnly = await call(server, "POST", "/api/v1/api-keys", { key: live, body: { name: "rules only", scopes: ["rules:read"] } })
    expectEnvelope(await get(server, rulesOnly.body.key, path, range), 403, "insufficient_scope")
    expectEnvelope(await get(server, "sek_live_00000000000000000000000000000000", path, range), 401, "invalid_api_key")
  })
})

describe("a client that goes away", () => {
  it("stops the export's query", async () => {
    const database = new pg.Client({ connectionString: server.databaseUrl })
    await database.connect()
    // The export's query, unless it only waits for the service to read its end (a cancelled
    // statement's backend does that until the connection's next statement).
    const running = async () =>
      (await database.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
           AND query LIKE '%count(DISTINCT e.session_id)%' AND state = 'active' AND wait_event IS DISTINCT FROM 'ClientRead'`
      )).rows[0].n as number
    try {
      // The export's query waits behind this lock for as long as the test holds it: only a
      // cancellation ends it.
      await database.query("BEGIN")
      await database.query("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")
      const abort = new AbortController()
      const res = await fetch(`${server.baseUrl}/api/v1/usage/export?${new URLSearchParams(range)}`, {
        headers: { authorization: `Bearer ${live}` },
        signal: abort.signal
      })
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      const first = await reader.read()
      expect(new TextDecoder().decode(first.value)).toMatch(/^day,user_id,/)
      await waitFor(running, (n) => n === 1, { what: "the export's query to be waiting" })
      abort.abort()
      await waitFor(running, (n) => n === 0, { what: "the export's query to be cancelled" })
    } finally {
      await database.query("ROLLBACK").catch(() => undefined)
      await database.end()
    }
    // The service goes on answering exports on its connections.
    expect((await download({ ...range, group_by: "day" })).status).toBe(200)
  })
})
