import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

/**
 * What the tools' own telemetry adds to the management API: productivity counters (crafted OTLP
 * metric bodies, delta and cumulative, resent as exporters do) beside spend, per user and team;
 * and coverage, each user seen through hooks, telemetry, both or neither. The real Claude Code
 * exporting its counters: test/e2e/adapters/claude-code-otlp.test.ts.
 */
let server: TestServer
let org: Bootstrapped
let admin: string
beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "views", "team")
  admin = org.api_key_live!
})
afterAll(() => server?.stop())

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
const DELTA = 1
const CUMULATIVE = 2

/** One Claude Code counter point, as its exporter sends it in http/json. */
const point = (startMs: number, timeMs: number, value: number, attributes: Record<string, string> = {}) => ({
  startTimeUnixNano: String(BigInt(startMs) * 1_000_000n),
  timeUnixNano: String(BigInt(timeMs) * 1_000_000n),
  asDouble: value,
  attributes: [attr("session.id", "s-1"), ...Object.entries(attributes).map(([k, v]) => attr(k, v))]
})

const metrics = (temporality: number, byName: Record<string, ReadonlyArray<ReturnType<typeof point>>>) => ({
  resourceMetrics: [{
    resource: { attributes: [attr("service.name", "claude-code")] },
    scopeMetrics: [{
      scope: { name: "com.anthropic.claude_code" },
      metrics: Object.entries(byName).map(([name, dataPoints]) => ({
        name,
        sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints }
      }))
    }]
  }]
})

const postMetrics = async (key: string, body: unknown) => {
  const res = await call(server, "POST", "/engine/v1/otlp/v1/metrics", { key, body })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
}

/** A user of the org with a license key of their own, in `teams`. */
const newUser = async (name: string, teams: ReadonlyArray<string> = []) => {
  const user = await call(server, "POST", "/api/v1/users", { key: admin, body: { email: `${name}@views.test`, name, team_ids: teams } })
  expect(user.status).toBe(201)
  const license = await call(server, "POST", "/api/v1/license-keys", { key: admin, body: { user_id: user.body.id } })
  expect(license.status).toBe(201)
  return { id: user.body.id as string, key: license.body.key as string }
}

const productivity = async (query: string) => {
  const res = await call(server, "GET", `/api/v1/productivity?${query}`, { key: admin })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body
}

const figuresOf = async (userId: string) => (await productivity(`user_id=${userId}`)).data.find((g: any) => g.key === userId)

describe("productivity figures from the tools' counters", () => {
  it("sums delta points, and a resent export counts nothing twice", async () => {
    const team = await call(server, "POST", "/api/v1/teams", { key: admin, body: { name: "deltas" } })
    const dev = await newUser("delta-dev", [team.body.id])
    const t = Date.now() - 60_000
    const first = metrics(DELTA, {
      "claude_code.lines_of_code.count": [point(t, t + 1000, 10, { type: "added" }), point(t, t + 1000, 4, { type: "removed" })],
      "claude_code.commit.count": [point(t, t + 1000, 1)],
      "claude_code.code_edit_tool.decision": [point(t, t + 1000, 3, { decision: "accept" }), point(t, t + 1000, 1, { decision: "reject" })],
      "claude_code.token.usage": [point(t, t + 1000, 999, { type: "input" })]
    })
    await postMetrics(dev.key, first)
    await postMetrics(dev.key, first) // the exporter's retry of the same batch
    await postMetrics(dev.key, metrics(DELTA, { "claude_code.lines_of_code.count": [point(t + 1000, t + 2000, 5, { type: "added" })] }))
    expect(await figuresOf(dev.id)).toMatchObject({
      name: "delta-dev",
      lines_added: 15,
      lines_removed: 4,
      commits: 1,
      pull_requests: 0,
      edits_accepted: 3,
      edits_rejected: 1
    })
    const byTeam = await productivity("group_by=team")
    expect(byTeam.data.find((g: any) => g.key === team.body.id)).toMatchObject({ name: "deltas", lines_added: 15, commits: 1 })
  })

  it("reads a cumulative series as its running total: repeated exports and resends count once", async () => {
    const dev = await newUser("cumulative-dev")
    const t = Date.now() - 60_000
    const lines = (timeMs: number, value: number, start = t) =>
      metrics(CUMULATIVE, { "claude_code.lines_of_code.count": [point(start, timeMs, value, { type: "added" })] })
    await postMetrics(dev.key, lines(t + 1000, 3))
    await postMetrics(dev.key, lines(t + 2000, 7)) // the same total, grown by 4
    await postMetrics(dev.key, lines(t + 2000, 7)) // resent
    await postMetrics(dev.key, lines(t + 3000, 7)) // exported again, nothing new
    // Another process of the tool: a series of its own, from its own start.
    await postMetrics(dev.key, lines(t + 4000, 2, t + 3500))
    expect(await figuresOf(dev.id)).toMatchObject({ lines_added: 9 })
    // A range starting after the first points counts only what the series grew by within it.
    const from = new Date(t + 1500).toISOString()
    const later = (await productivity(`user_id=${dev.id}&from=${encodeURIComponent(from)}`)).data[0]
    expect(later.lines_added).toBe(6)
  })

  it("shows spend beside the figures, and totals over every user", async () => {
    const dev = await newUser("spender")
    const t = Date.now() - 60_000
    await postMetrics(dev.key, metrics(DELTA, { "claude_code.pull_request.count": [point(t, t + 1000, 2)] }))
    const signal = await call(server, "POST", "/engine/v1/signals", {
      key: dev.key,
      body: {
        type: "token-milestone",
        adapter: "claude-code",
        session_id: "spend-1",
        metadata: { model: "claude-sonnet-4-5", tokens_in: 1000, tokens_out: 100 }
      }
    })
    expect(signal.status).toBe(200)
    const figures = await waitFor(() => figuresOf(dev.id), (f) => f?.tokens_in === 1000, { what: "the spend of the signal" })
    expect(figures).toMatchObject({ pull_requests: 2, tokens_out: 100, sessions: 1 })
    expect(figures.cost_usd).toBeGreaterThan(0)
    const all = await productivity("")
    expect(all.totals.pull_requests).toBeGreaterThanOrEqual(2)
    expect(all.totals.lines_added).toBe(all.data.reduce((n: number, g: any) => n + g.lines_added, 0))
  })

  it("refuses a range that ends before it starts and a cursor it did not make", async () => {
    const backwards = await call(server, "GET", "/api/v1/productivity?from=2026-02-01&to=2026-01-01", { key: admin })
    expect(backwards.status).toBe(422)
    const cursor = await call(server, "GET", "/api/v1/productivity?cursor=bm9wZQ", { key: admin })
    expect(cursor.status).toBe(400)
  })
})

describe("coverage: how each user is seen", () => {
  it("classifies users seen through hooks, telemetry, both or none, and those who stopped reporting", async () => {
    const hooks = await newUser("cov-hooks")
    const telemetry = await newUser("cov-telemetry")
    const both = await newUser("cov-both")
    const none = await newUser("cov-none")
    const quiet = await newUser("cov-quiet")
    const hookSignal = (key: string, session: string) =>
      call(server, "POST", "/engine/v1/signals", {
        key,
        body: { type: "post-tool", adapter: "claude-code", session_id: session, metadata: { tool_name: "Bash" } }
      })
    expect((await hookSignal(hooks.key, "h-1")).status).toBe(200)
    expect((await hookSignal(both.key, "b-1")).status).toBe(200)
    const now = Date.now()
    await postMetrics(telemetry.key, metrics(DELTA, { "claude_code.commit.count": [point(now - 2000, now - 1000, 1)] }))
    await postMetrics(both.key, metrics(DELTA, { "claude_code.commit.count": [point(now - 2000, now - 1000, 1)] }))
    const tenDaysAgo = now - 10 * 24 * 3600 * 1000
    await postMetrics(quiet.key, metrics(DELTA, { "claude_code.commit.count": [point(tenDaysAgo - 1000, tenDaysAgo, 1)] }))

    const byId = async (query = "") => {
      const res = await call(server, "GET", `/api/v1/coverage?limit=100${query}`, { key: admin })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return { body: res.body, user: (id: string) => res.body.data.find((u: any) => u.user_id === id) }
    }
    const seen = await waitFor(
      () => byId(),
      (r) => r.user(both.id)?.seen_through === "both" && r.user(hooks.id)?.seen_through === "hooks",
      { what: "the hook signals in the events" }
    )
    expect(seen.user(telemetry.id)).toMatchObject({ seen_through: "telemetry", last_hook_at: null, stopped_reporting: false })
    expect(seen.user(none.id)).toMatchObject({ seen_through: "none", last_hook_at: null, last_telemetry_at: null, stopped_reporting: false })
    expect(seen.user(quiet.id)).toMatchObject({ seen_through: "telemetry", stopped_reporting: true })
    expect(Date.parse(seen.user(quiet.id).last_telemetry_at)).toBe(tenDaysAgo)
    expect(seen.body.stale_after_days).toBe(7)
    expect(seen.body.totals.users).toBe(seen.body.data.length)

    const longer = await byId("&stale_after_days=30")
    expect(longer.user(quiet.id).stopped_reporting).toBe(false)
    const stopped = await byId("&stopped_reporting=true")
    expect(stopped.body.data.map((u: any) => u.user_id)).toContain(quiet.id)
    expect(stopped.body.data.every((u: any) => u.stopped_reporting)).toBe(true)
    const onlyHooks = await byId("&seen_through=hooks")
    expect(onlyHooks.body.data.every((u: any) => u.seen_through === "hooks")).toBe(true)
    expect(onlyHooks.body.data.map((u: any) => u.user_id)).toContain(hooks.id)
    const bad = await call(server, "GET", "/api/v1/coverage?stale_after_days=0", { key: admin })
    expect(bad.status).toBe(400)
  })

  it("counts a user whose only signals came from the tool's OTLP log events as seen through telemetry", async () => {
    const dev = await newUser("cov-otel-logs")
    const event = {
      timeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
      body: { stringValue: "claude_code.user_prompt" },
      attributes: [attr("session.id", "otel-logs-1"), attr("event.name", "user_prompt"), attr("prompt.id", "p-1"), attr("prompt", "hi")]
    }
    const logs = { resourceLogs: [{ resource: { attributes: [attr("service.name", "claude-code")] }, scopeLogs: [{ logRecords: [event] }] }] }
    const res = await call(server, "POST", "/engine/v1/otlp/v1/logs", { key: dev.key, body: logs })
    expect(res.status).toBe(200)
    const user = await waitFor(
      async () => {
        const r = await call(server, "GET", "/api/v1/coverage?seen_through=telemetry&limit=100", { key: admin })
        return r.body.data.find((u: any) => u.user_id === dev.id)
      },
      (u) => u !== undefined,
      { what: "the prompt in the events" }
    )
    expect(user.last_hook_at).toBeNull()
  })
})
