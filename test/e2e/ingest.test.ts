import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, freshDatabase, startServer, type TestServer, withStore } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

/** `levels` arrays, each inside the one before (`[[[]]]` is 3). */
const nested = (levels: number): unknown => levels <= 1 ? [] : [nested(levels - 1)]

const setOrg = (databaseUrl: string, orgId: string, timeoutS: number) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE orgs SET session_timeout_s = ${timeoutS} WHERE id = ${orgId}`
    })
  )

describe.each(logVariants())("ingestion over %s", (_name, logEnv) => {
  let server: TestServer
  let env: Record<string, string>
  let org: Bootstrapped

  beforeAll(async () => {
    env = logEnv()
    server = await startServer({ env })
    org = await bootstrapOrg(server.databaseUrl, "ingest", "team")
  })
  afterAll(() => server?.stop())

  const send = (key: string, body: unknown) => call(server, "POST", "/engine/v1/signals", { key, body })

  it("accepts a signal, answers ok with its ids, and shows it in the session and the events", async () => {
    const res = await send(org.license_key, {
      type: "post-tool",
      adapter: "claude-code",
      session_id: "cc-1",
      metadata: { model: "claude-sonnet-4-20250514", tokens_in: 1_000_000, tokens_out: 100_000, latency_ms: 420, project_id: "proj_web", tool: "Edit" }
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ ok: true })
    expect(res.body.signal_id).toMatch(/^sig_[0-9a-f]{32}$/)
    expect(res.body.session_id).toMatch(/^sess_/)
    expect(res.body.action).toBeUndefined()

    const sessions = await call(server, "GET", "/engine/v1/sessions", { key: org.license_key })
    const session = sessions.body.sessions.find((s: { id: string }) => s.id === res.body.session_id)
    expect(session).toMatchObject({ adapter: "claude-code", signals: 1, tokens_in: 1_000_000, tokens_out: 100_000, ended_at: null })
    // 1M input at $3/M plus 100k output at $15/M, estimated from the shipped price table.
    expect(session.cost_usd).toBeCloseTo(4.5, 9)

    const one = await call(server, "GET", `/engine/v1/sessions/${res.body.session_id}`, { key: org.license_key })
    expect(one.body.signals).toEqual([
      expect.objectContaining({ id: res.body.signal_id, type: "post-tool", metadata: expect.objectContaining({ tool: "Edit" }) })
    ])

    const events = await call(server, "GET", `/api/v1/events?session_id=${res.body.session_id}`, { key: org.api_key_live! })
    expect(events.body.data).toEqual([
      expect.objectContaining({
        id: `evt_${res.body.signal_id.slice(4)}`,
        session_id: res.body.session_id,
        user_id: org.user_id,
        project_id: "proj_web",
        model: "claude-sonnet-4-20250514",
        latency_ms: 420,
        error_code: null
      })
    ])
  })

  it("rejects bad signals with the envelope and stores nothing", async () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ type: "teleport", adapter: "a", session_id: "s" }, "invalid_signal_type"],
      [{ adapter: "a", session_id: "s" }, "invalid_parameters"],
      [{ type: "stop", session_id: "s" }, "invalid_parameters"],
      [{ type: "stop", adapter: "a" }, "invalid_parameters"],
      [{ type: "stop", adapter: "", session_id: "s" }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: [] }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: "x" }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { tokens_in: -1 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { tokens_in: "12" } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { cost_usd: -0.5 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { model: 7 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { blob: "x".repeat(20_000) } }, "metadata_too_large"],
      // Past the bounds that keep every sum finite and in range.
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { cost_usd: 1e300 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { latency_ms: 1e308 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { cost_usd: 1_000_000.01 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { tokens_in: 1_000_000_001 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { tokens_out: 2 ** 53 - 1 } }, "invalid_parameters"],
      // Text PostgreSQL cannot store, wherever it is.
      [{ type: "stop", adapter: "a\u0000", session_id: "s" }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s\ud800" }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { model: "m\u0000" } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { "k\u0000": 1 } }, "invalid_parameters"],
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { deep: [{ v: "x\udc00y" }] } }, "invalid_parameters"],
      // Nesting past 64 levels (the signal itself is the first).
      [{ type: "stop", adapter: "a", session_id: "s", metadata: { deep: nested(63) } }, "invalid_parameters"]
    ]
    const before = await call(server, "GET", "/api/v1/events?limit=100", { key: org.api_key_live! })
    for (const [body, code] of cases) {
      const res = await send(org.license_key, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.code, JSON.stringify(body)).toBe(code)
      expect(res.body.request_id).toMatch(/^req_/)
    }
    const after = await call(server, "GET", "/api/v1/events?limit=100", { key: org.api_key_live! })
    expect(after.body.data.length).toBe(before.body.data.length)
  })

  it("a body nested thousands of levels deep is refused with 400, not a crash; 64 levels are accepted", async () => {
    const deep = `{"type":"stop","adapter":"a","session_id":"s","metadata":{"a":${"[".repeat(5_000)}${"]".repeat(5_000)}}}`
    const res = await call(server, "POST", "/engine/v1/signals", { key: org.license_key, rawBody: deep })
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ code: "invalid_parameters", status: 400 })
    expect(res.body.error).toContain("deeper than 64 levels")
    const atLimit = await send(org.license_key, { type: "stop", adapter: "nesting", session_id: "n-1", metadata: { deep: nested(62) } })
    expect(atLimit.status).toBe(200)
    const events = await call(server, "GET", `/api/v1/events?session_id=${atLimit.body.session_id}`, { key: org.api_key_live! })
    expect(events.body.data.map((e: { signal_id: string }) => e.signal_id)).toEqual([atLimit.body.signal_id])
  })

  it("signals at the bounds are accepted and counted, and their partition goes on", async () => {
    const big = {
      type: "post-tool",
      adapter: "bounds",
      session_id: "b-1",
      metadata: { tokens_in: 1_000_000_000, tokens_out: 1_000_000_000, cost_usd: 1_000_000 }
    }
    const answers = []
    for (let i = 0; i < 3; i++) answers.push(await send(org.license_key, big))
    // A signal after them is processed (a verdict, not "pending"): the partition did not stall.
    answers.push(await send(org.license_key, { type: "stop", adapter: "bounds", session_id: "b-1" }))
    for (const a of answers) {
      expect(a.status).toBe(200)
      expect(a.body.action).toBeUndefined()
    }
    const session = await call(server, "GET", `/engine/v1/sessions/${answers[0]!.body.session_id}`, { key: org.license_key })
    expect(session.body.session).toMatchObject({ signals: 4, tokens_in: 3_000_000_000, tokens_out: 3_000_000_000, cost_usd: 3_000_000 })
  })

  it("a session's cost is the sum of its events' costs, for costs below a nano-dollar too", async () => {
    const answers = []
    for (const cost_usd of [4e-10, 4e-10, 1.4e-9, 1.4e-9, 0.1, 0.2]) {
      answers.push(await send(org.license_key, { type: "post-tool", adapter: "nano", session_id: "nano-1", metadata: { cost_usd } }))
    }
    const sessionId = answers[0]!.body.session_id
    const events = await call(server, "GET", `/api/v1/events?session_id=${sessionId}`, { key: org.api_key_live! })
    const costs = events.body.data.map((e: { cost_usd: number }) => e.cost_usd).sort((a: number, b: number) => a - b)
    // Costs are kept to the nano-dollar: what the events list is what the session adds up.
    expect(costs).toEqual([0, 0, 1e-9, 1e-9, 0.1, 0.2])
    const session = await call(server, "GET", `/api/v1/sessions/${sessionId}`, { key: org.api_key_live! })
    expect(session.body.cost_usd).toBe(0.300000002)
    const engine = await call(server, "GET", `/engine/v1/sessions/${sessionId}`, { key: org.license_key })
    expect(engine.body.session.cost_usd).toBe(0.300000002)
  })

  it("a commit the database refuses is retried until it goes in; the verdict does not wait, /readyz names its partition", { timeout: 60_000 }, async () => {
    const ddl = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
      withStore(server.databaseUrl, Effect.flatMap(SqlClient.SqlClient, statement))
    // A real failure of the projection write, for this adapter's events only.
    await ddl((sql) => sql`CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`)
    await ddl((sql) => sql`CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.adapter = 'refused') EXECUTE FUNCTION refuse_event()`)
    try {
      // The verdict comes from the fold, once the signal is in the log: the projections follow.
      const res = await send(org.license_key, { type: "stop", adapter: "refused", session_id: "r-1" })
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ ok: true, session_id: expect.any(String) })
      expect(res.body.action).toBeUndefined()
      const degraded = await waitFor(() => call(server, "GET", "/readyz"), (r) => r.body.status === "degraded", { what: "/readyz to say degraded" })
      expect(degraded.status).toBe(200)
      expect(degraded.body.checks.partitions.failing).toEqual([{
        partition: expect.any(Number),
        since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        attempts: expect.any(Number),
        error: expect.stringContaining("refused by the test")
      }])
      expect(degraded.body.checks.partitions.owned).toContain(degraded.body.checks.partitions.failing[0].partition)
    } finally {
      await ddl((sql) => sql`DROP TRIGGER refuse_event ON events`)
    }
    // The cause gone, the retried commit goes in: the signal answered ok is there, once.
    const ready = await waitFor(() => call(server, "GET", "/readyz"), (r) => r.body.status === "ready", { timeoutMs: 30_000, what: "/readyz to say ready" })
    expect(ready.body.checks.partitions.failing).toEqual([])
    const stored = await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM events WHERE org_id = ${org.org_id} AND adapter = 'refused'`
      })
    )
    expect(stored[0]!.n).toBe(1)
  })

  it("every signal answered ok can be found, exactly once, whatever the concurrency", async () => {
    const users = await Promise.all(Array.from({ length: 8 }, async (_, i) => {
      const user = await call(server, "POST", "/api/v1/users", {
        key: org.api_key_live!,
        body: { email: `dev${i}@ingest.test`, name: `Dev ${i}` }
      })
      const license = await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: user.body.id } })
      return license.body.key as string
    }))
    const answers = await Promise.all(
      Array.from(
        { length: 160 },
        (_, i) => send(users[i % users.length]!, { type: "user-prompt", adapter: "cursor", session_id: `c-${i % 8}`, metadata: { n: i } })
      )
    )
    expect(answers.every((a) => a.status === 200 && a.body.ok === true)).toBe(true)
    const ids = new Set(answers.map((a) => a.body.signal_id as string))
    expect(ids.size).toBe(160)
    // One session per user and adapter, each counting its user's 20 signals. Projections are
    // written behind the verdicts; a read through the API waits for this node's to commit.
    const sessions = await call(server, "GET", "/api/v1/sessions?adapter=cursor&limit=100", { key: org.api_key_live! })
    expect(sessions.body.total).toBe(8)
    expect(sessions.body.data.map((s: { signal_count: number }) => s.signal_count)).toEqual(Array(8).fill(20))
    const stored = await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly signal_id: string }>`SELECT signal_id FROM events WHERE org_id = ${org.org_id} AND adapter = 'cursor'`
      })
    )
    expect(stored.map((r) => r.signal_id).sort()).toEqual([...ids].sort())
  })

  it("session-end closes the session; the next signal opens a new one", async () => {
    const first = await send(org.license_key, { type: "session-start", adapter: "codex", session_id: "x1" })
    const end = await send(org.license_key, { type: "session-end", adapter: "codex", session_id: "x1" })
    expect(end.body.session_id).toBe(first.body.session_id)
    const next = await send(org.license_key, { type: "user-prompt", adapter: "codex", session_id: "x2" })
    expect(next.body.session_id).not.toBe(first.body.session_id)
    const closed = await call(server, "GET", `/api/v1/sessions/${first.body.session_id}`, { key: org.api_key_live! })
    expect(closed.body).toMatchObject({ signal_count: 2, status: "ended", end_reason: "session-end" })
    expect(closed.body.ended_at).toBe(closed.body.signals[1].timestamp)
  })

  it("an inactive session ends by timeout at its last activity, through a tick in the log", async () => {
    const quick = await bootstrapOrg(server.databaseUrl, `quick-${_name}`, "team")
    const a = await send(quick.license_key, { type: "user-prompt", adapter: "gemini-cli", session_id: "g1" })
    const b = await send(quick.license_key, { type: "post-tool", adapter: "gemini-cli", session_id: "g1" })
    expect(b.body.session_id).toBe(a.body.session_id)
    // The org's timeout is stamped on each signal; the session's last signal sets the timer.
    await setOrg(server.databaseUrl, quick.org_id, 1)
    const c = await send(quick.license_key, { type: "stop", adapter: "gemini-cli", session_id: "g1" })
    expect(c.body.session_id).toBe(a.body.session_id)
    const ended = await waitFor(
      () => call(server, "GET", `/api/v1/sessions/${a.body.session_id}`, { key: quick.api_key_live! }),
      (r) => r.body.ended_at !== null,
      { what: "the session to time out" }
    )
    expect(ended.body).toMatchObject({ status: "ended", end_reason: "timeout", signal_count: 3 })
    expect(ended.body.ended_at).toBe(ended.body.signals[2].timestamp)
    const again = await send(quick.license_key, { type: "user-prompt", adapter: "gemini-cli", session_id: "g1" })
    expect(again.body.session_id).not.toBe(a.body.session_id)
  })

  it("a restarted node resumes where the last one stopped: open sessions continue, nothing is projected twice", async () => {
    const databaseUrl = await freshDatabase()
    const sharedEnv = logEnv()
    const nodeA = await startServer({ databaseUrl, env: sharedEnv })
    const o = await bootstrapOrg(databaseUrl, "restart", "team")
    const before = await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) =>
          call(nodeA, "POST", "/engine/v1/signals", { key: o.license_key, body: { type: "post-tool", adapter: "copilot", session_id: "p", metadata: { i } } })
      )
    )
    await nodeA.stop()
    const nodeB = await startServer({ databaseUrl, env: sharedEnv })
    try {
      const after = await call(nodeB, "POST", "/engine/v1/signals", { key: o.license_key, body: { type: "post-tool", adapter: "copilot", session_id: "p" } })
      expect(after.body.session_id).toBe(before[0]!.body.session_id)
      const session = await call(nodeB, "GET", `/api/v1/sessions/${after.body.session_id}`, { key: o.api_key_live! })
      expect(session.body.signal_count).toBe(11)
      expect(session.body.signals).toHaveLength(11)
    } finally {
      await nodeB.stop()
    }
  })
})
