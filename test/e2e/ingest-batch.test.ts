import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"

describe.each(logVariants())("batch ingestion over %s", (_name, logEnv) => {
  let server: TestServer
  let org: Bootstrapped

  beforeAll(async () => {
    server = await startServer({ env: logEnv() })
    org = await bootstrapOrg(server.databaseUrl, "batch", "team")
  })
  afterAll(() => server?.stop())

  const sendBatch = (signals: ReadonlyArray<unknown>) => call(server, "POST", "/engine/v1/signals/batch", { key: org.license_key, body: { signals } })

  const eventsOf = async (sessionId: string) =>
    (await call(server, "GET", `/api/v1/events?session_id=${sessionId}&limit=100`, { key: org.api_key_live! })).body
      .data as ReadonlyArray<{ signal_id: string; ts: string }>

  it("answers each signal of a mixed batch in order and stores exactly the valid ones", async () => {
    const signal = (n: number) => ({
      type: "post-tool",
      adapter: "batch-mixed",
      session_id: "bm-1",
      metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 10, latency_ms: 12, project_id: "proj_b", tool: "Edit", n }
    })
    const res = await sendBatch([
      signal(0),
      { type: "teleport", adapter: "batch-mixed", session_id: "bm-1" },
      signal(2),
      { type: "stop", adapter: "batch-mixed", session_id: "bm-1", metadata: { tokens_in: -1 } },
      { type: "stop", adapter: "batch-mixed", session_id: "bm-1", metadata: { blob: "x".repeat(20_000) } },
      "not an object",
      signal(6),
      // Text that cannot be stored, and a cost past the bound: refused each on its own.
      { type: "stop", adapter: "batch-mixed", session_id: "bm-\u0000" },
      { type: "stop", adapter: "batch-mixed", session_id: "bm-1", metadata: { note: "\ud800" } },
      { type: "stop", adapter: "batch-mixed", session_id: "bm-1", metadata: { cost_usd: 1e300 } }
    ])
    expect(res.status).toBe(200)
    const results = res.body.results as ReadonlyArray<Record<string, any>>
    expect(results.map((r) => r.ok === true ? "ok" : r.error.code)).toEqual([
      "ok",
      "invalid_signal_type",
      "ok",
      "invalid_parameters",
      "metadata_too_large",
      "invalid_parameters",
      "ok",
      "invalid_parameters",
      "invalid_parameters",
      "invalid_parameters"
    ])
    const valid = [results[0]!, results[2]!, results[6]!]
    for (const r of valid) {
      expect(r.signal_id).toMatch(/^sig_[0-9a-f]{32}$/)
      // No rule fired, so no action: the result is exactly the documented fields.
      expect(Object.keys(r).sort()).toEqual(["ok", "session_id", "signal_id"])
    }
    for (const i of [1, 3, 4, 5, 7, 8, 9]) {
      expect(Object.keys(results[i]!).sort()).toEqual(["error", "ok"])
      expect(Object.keys(results[i]!.error).sort()).toEqual(["code", "error"])
    }
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    const sessionId = valid[0]!.session_id as string
    expect(valid.map((r) => r.session_id)).toEqual([sessionId, sessionId, sessionId])
    for (const i of [1, 3, 4, 5, 7, 8, 9]) expect(results[i]!.error.error).toEqual(expect.any(String))
    expect(results[7]!.error.error).toContain("cannot be stored")

    const stored = await eventsOf(sessionId)
    expect(stored.map((e) => e.signal_id).sort()).toEqual(valid.map((r) => r.signal_id as string).sort())
  })

  it("a signal nested thousands of levels deep is refused in its place; the others of its batch are stored", async () => {
    const valid = JSON.stringify({ type: "stop", adapter: "batch-deep", session_id: "bd-1" })
    const deep = `{"type":"stop","adapter":"batch-deep","session_id":"bd-1","metadata":{"a":${"[".repeat(5_000)}${"]".repeat(5_000)}}}`
    const res = await call(server, "POST", "/engine/v1/signals/batch", { key: org.license_key, rawBody: `{"signals":[${valid},${deep}]}` })
    expect(res.status).toBe(200)
    const [first, second] = res.body.results
    expect(first).toMatchObject({ ok: true })
    expect(second).toMatchObject({ ok: false, error: { code: "invalid_parameters" } })
    expect(second.error.error).toContain("deeper than 64 levels")
    expect((await eventsOf(first.session_id)).map((e) => e.signal_id)).toEqual([first.signal_id])
  })

  it("answers a blocked signal of a batch with the rule's verdict, and the others of it as allowed", async () => {
    const blocking = await bootstrapOrg(server.databaseUrl, "batch-verdicts", "team")
    const rule = await call(server, "POST", "/api/v1/rules", {
      key: blocking.api_key_live!,
      body: {
        name: "No o3",
        type: "model_filter",
        scope: "org",
        scope_id: blocking.org_id,
        condition: { model: { in: ["o3"] } },
        action: "block",
        action_config: { message: "o3 is not allowed here" }
      }
    })
    expect(rule.status).toBe(201)
    const batch = [
      { type: "post-tool", adapter: "batch-verdicts", session_id: "bv-1", metadata: { model: "claude-sonnet-4" } },
      { type: "post-tool", adapter: "batch-verdicts", session_id: "bv-1", metadata: { model: "o3" } }
    ]
    // The rule is in force for the very next batch.
    const results = (await call(server, "POST", "/engine/v1/signals/batch", { key: blocking.license_key, body: { signals: batch } })).body
      .results as ReadonlyArray<Record<string, any>>
    expect(results[0]).toEqual({ ok: true, signal_id: expect.any(String), session_id: expect.any(String) })
    expect(results[1]).toEqual({
      ok: false,
      signal_id: expect.any(String),
      session_id: results[0]!.session_id,
      action: "block",
      rule_id: rule.body.id,
      message: "o3 is not allowed here"
    })
  })

  it("keeps input order within a session: timestamps do not decrease", async () => {
    const signals = Array.from({ length: 50 }, (_, n) => ({
      type: n === 0 ? "session-start" : "user-prompt",
      adapter: "batch-order",
      session_id: "bo-1",
      metadata: { n }
    }))
    const res = await sendBatch(signals)
    expect(res.status).toBe(200)
    const results = res.body.results as ReadonlyArray<{ ok: boolean; signal_id: string; session_id: string }>
    expect(results).toHaveLength(50)
    expect(results.every((r) => r.ok)).toBe(true)
    const session = await call(server, "GET", `/api/v1/sessions/${results[0]!.session_id}`, { key: org.api_key_live! })
    const shown = session.body.signals as ReadonlyArray<{ id: string; timestamp: string; metadata: { n: number } }>
    expect(shown.map((s) => s.id)).toEqual(results.map((r) => r.signal_id))
    expect(shown.map((s) => s.metadata.n)).toEqual(signals.map((s) => s.metadata.n))
    const times = shown.map((s) => Date.parse(s.timestamp))
    expect(times.every((t, i) => i === 0 || t >= times[i - 1]!)).toBe(true)
  })

  it("refuses an empty batch and one of more than 500 signals with 400, storing nothing", async () => {
    const one = { type: "stop", adapter: "batch-size", session_id: "bs-1" }
    const before = await call(server, "GET", "/api/v1/events?limit=100", { key: org.api_key_live! })
    for (const signals of [[], Array.from({ length: 501 }, () => one)]) {
      const res = await sendBatch(signals)
      expect(res.status, `${signals.length} signals`).toBe(400)
      expect(res.body.code).toBe("invalid_parameters")
      expect(res.body.request_id).toMatch(/^req_/)
    }
    const after = await call(server, "GET", "/api/v1/events?limit=100", { key: org.api_key_live! })
    expect(after.body.data.length).toBe(before.body.data.length)
  })

  it("needs a license key", async () => {
    const res = await call(server, "POST", "/engine/v1/signals/batch", { body: { signals: [] } })
    expect(res.status).toBe(401)
  })
})
