import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { execFileSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"
import { startReceiver } from "../support/receiver.ts"
import { waitFor } from "../support/wait.ts"

const secret = "s3cr3t-0123456789-abcdefghijklmnopqrstuvwxyz"
const scale = 0.001
const env = {
  WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
  WEBHOOK_RETRY_SCALE: String(scale),
  WEBHOOK_TIMEOUT: "1 second",
  WEBHOOK_POLL_INTERVAL: "20 millis"
}

/** The signature as an independent implementation (openssl) computes it. */
const opensslSignature = (key: string, body: string) =>
  "sha256=" + execFileSync("openssl", ["dgst", "-sha256", "-hmac", key], { input: body }).toString().trim().split(/\s+/).pop()

const query = <A extends object>(databaseUrl: string, run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* run(sql)
    }).pipe(Effect.orDie)
  )

let server: TestServer
let orgs = 0
const newOrg = () => bootstrapOrg(server.databaseUrl, `wh-${++orgs}`, "team")

beforeAll(async () => {
  server = await startServer({ env })
})
afterAll(() => server?.stop())

const register = (org: Bootstrapped, url: string, events: ReadonlyArray<string> = ["session.started", "session.ended"]) =>
  call(server, "POST", "/api/v1/webhooks", { key: org.api_key_live!, body: { url, events, secret } })

const signal = (target: TestServer, org: Bootstrapped, type: string, sessionId = "cc-1") =>
  call(target, "POST", "/engine/v1/signals", {
    key: org.license_key,
    body: { type, adapter: "claude-code", session_id: sessionId, metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 10 } }
  })

const attemptsOf = (databaseUrl: string, webhookId: string) =>
  query<{ event_id: string; attempt: number; status_code: number | null; error: string | null; delay_ms: number | null }>(
    databaseUrl,
    (sql) =>
      sql`SELECT event_id, attempt, status_code, error,
            (extract(epoch FROM next_attempt_at - finished_at) * 1000)::float8 AS delay_ms
          FROM webhook_attempts WHERE webhook_id = ${webhookId} ORDER BY event_id, attempt`
  )

describe("webhooks API", () => {
  it("registers a webhook (secret never returned), lists it with a cursor, deletes it", async () => {
    const org = await newOrg()
    const created = await register(org, "https://8.8.8.8/hooks/a", ["session.ended", "session.started", "session.ended"])
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-f]{32}$/),
      url: "https://8.8.8.8/hooks/a",
      events: ["session.started", "session.ended"],
      enabled: true,
      failing: false,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/)
    })
    expect(JSON.stringify(created.body)).not.toContain(secret)
    const second = await register(org, "https://8.8.8.8/hooks/b", ["budget.exceeded"])
    const page1 = await call(server, "GET", "/api/v1/webhooks?limit=1", { key: org.api_key_live! })
    expect(page1.status).toBe(200)
    expect(page1.body.data.map((w: { id: string }) => w.id)).toEqual([second.body.id])
    expect(page1.body.has_more).toBe(true)
    const page2 = await call(server, "GET", `/api/v1/webhooks?limit=1&cursor=${page1.body.cursor}`, { key: org.api_key_live! })
    expect(page2.body).toEqual({ data: [created.body], cursor: "", has_more: false })
    expect(JSON.stringify(page2.body)).not.toContain(secret)

    const del = await call(server, "DELETE", `/api/v1/webhooks/${created.body.id}`, { key: org.api_key_live! })
    expect(del.status).toBe(204)
    const again = await call(server, "DELETE", `/api/v1/webhooks/${created.body.id}`, { key: org.api_key_live! })
    expect(again.status).toBe(404)
    // The secret is stored encrypted, not as given.
    const stored = await query<{ secret_ciphertext: string }>(
      server.databaseUrl,
      (sql) => sql`SELECT secret_ciphertext FROM webhooks WHERE id = ${second.body.id}`
    )
    expect(stored[0]!.secret_ciphertext).not.toContain(secret)
    expect(stored[0]!.secret_ciphertext).toMatch(/^v1\./)
  })

  it("answers 400 for a malformed body and 422 for unknown events, short secrets and refused URLs", async () => {
    const org = await newOrg()
    const post = (body: unknown) => call(server, "POST", "/api/v1/webhooks", { key: org.api_key_live!, body })
    for (
      const body of [{ url: "https://example.com", events: "session.started", secret }, { url: "https://example.com", events: ["session.started"] }, {
        events: ["session.started"],
        secret
      }, { url: 5, events: [], secret }]
    ) {
      const res = await post(body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body).toMatchObject({ code: "invalid_parameters", status: 400, request_id: expect.stringMatching(/^req_/) })
    }
    const unprocessable: ReadonlyArray<readonly [unknown, string]> = [
      [{ url: "https://example.com", events: ["session.started", "session.exploded"], secret }, "unknown_event"],
      [{ url: "https://example.com", events: [], secret }, "validation_error"],
      [{ url: "https://example.com", events: ["session.started"], secret: "x".repeat(31) }, "secret_too_short"],
      [{ url: "not a url", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "ftp://example.com/x", events: ["session.started"], secret }, "url_not_allowed"],
      // SSRF: plain http to a host that is not allowed, and hosts that are (or resolve to) internal addresses.
      [{ url: "http://example.com/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://localhost/hook", events: ["session.started"], secret }, "url_not_allowed"],
      // (127.0.0.1 itself is allowed in this suite, for the local receivers; its neighbours are not.)
      [{ url: "https://127.0.0.2/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://2130706434/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://0.0.0.0/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://192.168.1.1/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://[fe80::1]/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://169.254.169.254/latest/meta-data", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://10.1.2.3/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://100.64.0.1/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://[::1]/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://[::ffff:127.0.0.1]/hook", events: ["session.started"], secret }, "url_not_allowed"],
      [{ url: "https://[fd00::1]/hook", events: ["session.started"], secret }, "url_not_allowed"],
      // IPv6 forms that embed an IPv4 address or reach a non-global range.
      ...["[::127.0.0.1]", "[::7f00:1]", "[::a9fe:a9fe]", "[64:ff9b::7f00:1]", "[64:ff9b:1::7f00:1]", "[2002:7f00:1::1]",
        "[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "[fec0::1]"].map((host) =>
          [{ url: `https://${host}/hook`, events: ["session.started"], secret }, "url_not_allowed"] as const
        ),
      [{ url: "https://user:pw@example.com/hook", events: ["session.started"], secret }, "url_not_allowed"]
    ]
    for (const [body, code] of unprocessable) {
      const res = await post(body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body.code, JSON.stringify(body)).toBe(code)
    }
    // The refusals an operator can lift say how.
    for (const url of ["http://example.com/hook", "https://localhost/hook", "https://10.1.2.3/hook"]) {
      const res = await post({ url, events: ["session.started"], secret })
      expect(res.body.error, url).toMatch(/unless the service lists the host in WEBHOOK_ALLOWED_HOSTS/)
    }
    expect((await post({ url: "ftp://example.com/x", events: ["session.started"], secret })).body.error).toBe("url must use https")
    const list = await call(server, "GET", "/api/v1/webhooks", { key: org.api_key_live! })
    expect(list.body.data).toEqual([])
  })

  it("checks scopes (webhooks:read / webhooks:write) and hides other tenants' webhooks (404)", async () => {
    const org = await newOrg()
    const other = await newOrg()
    const mine = await register(org, "https://8.8.8.8/mine")
    expect(mine.status).toBe(201)
    const keyWith = async (scopes: ReadonlyArray<string>) =>
      (await call(server, "POST", "/api/v1/api-keys", { key: org.api_key_live!, body: { name: scopes.join(" "), scopes } })).body.key as string
    const sessionsOnly = await keyWith(["sessions:read"])
    const readOnly = await keyWith(["webhooks:read"])
    expect((await call(server, "GET", "/api/v1/webhooks", { key: sessionsOnly })).status).toBe(403)
    expect((await call(server, "GET", "/api/v1/webhooks", { key: readOnly })).status).toBe(200)
    const denied = await call(server, "POST", "/api/v1/webhooks", { key: readOnly, body: { url: "https://example.com", events: ["session.started"], secret } })
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("insufficient_scope")
    expect((await call(server, "DELETE", `/api/v1/webhooks/${mine.body.id}`, { key: readOnly })).status).toBe(403)
    expect((await call(server, "GET", "/api/v1/alerts", { key: readOnly })).status).toBe(403)
    expect((await call(server, "GET", "/api/v1/webhooks")).status).toBe(401)
    // Another org, and the other environment of the same org, do not see it.
    for (const key of [other.api_key_live!, org.api_key_test]) {
      expect((await call(server, "DELETE", `/api/v1/webhooks/${mine.body.id}`, { key })).status).toBe(404)
      expect((await call(server, "POST", `/api/v1/webhooks/${mine.body.id}/test`, { key })).status).toBe(404)
      expect((await call(server, "POST", `/api/v1/webhooks/${mine.body.id}/enable`, { key })).status).toBe(404)
      expect((await call(server, "GET", "/api/v1/webhooks", { key })).body.data).toEqual([])
    }
  })
})

describe("webhook delivery", () => {
  it("delivers session.started and session.ended with the spec's envelope, signed over the exact body", async () => {
    const receiver = await startReceiver()
    const lateReceiver = await startReceiver()
    try {
      const org = await newOrg()
      const hook = await register(org, receiver.url)
      expect(hook.status).toBe(201)
      const endedOnly = await register(org, lateReceiver.url.replace("/hook", "/ended"), ["session.ended"])
      expect(endedOnly.status).toBe(201)
      const first = await signal(server, org, "session-start")
      expect(first.status).toBe(200)
      await waitFor(async () => receiver.received.length, (n) => n >= 1, { what: "session.started" })
      // Registered after the session started: gets its end, not its start.
      const late = await register(org, lateReceiver.url.replace("/hook", "/late"))
      await signal(server, org, "post-tool")
      const end = await signal(server, org, "session-end")
      expect(end.body.session_id).toBe(first.body.session_id)
      await waitFor(async () => receiver.received.length, (n) => n >= 2, { what: "session.ended" })
      await waitFor(async () => lateReceiver.received.length, (n) => n >= 2, { what: "late deliveries" })

      const [started, ended] = receiver.events()
      expect(receiver.received).toHaveLength(2)
      expect(started).toEqual({
        id: expect.stringMatching(/^wev_[0-9a-f]{32}$/),
        type: "session.started",
        org_id: org.org_id,
        ts: expect.any(String),
        data: {
          session_id: first.body.session_id,
          user_id: org.user_id,
          adapter: "claude-code",
          client_session_id: "cc-1",
          project_id: null,
          started_at: expect.any(String)
        }
      })
      expect(started!.ts).toBe(started!.data.started_at)
      expect(ended).toMatchObject({
        type: "session.ended",
        org_id: org.org_id,
        data: {
          session_id: first.body.session_id,
          user_id: org.user_id,
          adapter: "claude-code",
          end_reason: "session-end",
          signal_count: 3,
          tokens_in: 300,
          tokens_out: 30,
          model: "claude-sonnet-4",
          models: ["claude-sonnet-4"]
        }
      })
      expect(ended!.ts).toBe(ended!.data.ended_at)
      expect(ended!.id).not.toBe(started!.id)

      for (const r of receiver.received) {
        expect(r.headers["content-type"]).toBe("application/json")
        const header = r.headers["x-service-signature"]
        expect(header).toBe(opensslSignature(secret, r.body))
        // A tampered body does not verify.
        expect(header).not.toBe(opensslSignature(secret, r.body.replace("claude-code", "claude-codf")))
        expect(header).not.toBe(opensslSignature(secret.slice(1), r.body))
      }
      // The ended-only webhook got session.ended only; the late one only what followed its registration.
      expect(late.status).toBe(201)
      const at = (path: string) => lateReceiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body).id)
      expect(at("/ended")).toEqual([ended!.id])
      expect(at("/late")).toEqual([ended!.id])
      const deliveries = await query<{ webhook_id: string; event_id: string; status: string }>(
        server.databaseUrl,
        (sql) =>
          sql`SELECT webhook_id, event_id, status FROM webhook_deliveries WHERE webhook_id IN (${endedOnly.body.id}, ${late.body.id}) ORDER BY webhook_id`
      )
      expect(deliveries.map((d) => d.event_id)).toEqual([ended!.id, ended!.id])
    } finally {
      await receiver.close()
      await lateReceiver.close()
    }
  })

  it("a notify rule's firing reaches every enabled webhook of the org; a log rule's only those subscribed to rule.triggered", async () => {
    const subscribed = await startReceiver()
    const other = await startReceiver()
    try {
      const org = await newOrg()
      expect((await register(org, subscribed.url, ["rule.triggered"])).status).toBe(201)
      const otherHook = await register(org, other.url, ["session.ended"])
      expect(otherHook.status).toBe(201)
      const rule = (model: string, action: "log" | "notify") =>
        call(server, "POST", "/api/v1/rules", {
          key: org.api_key_live!,
          body: { name: `${action} ${model}`, type: "model_filter", scope: "org", scope_id: org.org_id, condition: { model: { in: [model] } }, action }
        }).then((r) => {
          expect(r.status).toBe(201)
          return r.body.id as string
        })
      const logged = await rule("model-logged", "log")
      const notified = await rule("model-notified", "notify")
      const send = (model: string) =>
        call(server, "POST", "/engine/v1/signals", {
          key: org.license_key,
          body: { type: "post-tool", adapter: "cursor", session_id: "n", metadata: { model } }
        })
      // The rules are in force for the very next signal.
      expect((await send("model-notified")).body.action).toBe("notify")
      expect((await send("model-logged")).body.action).toBe("log")
      await waitFor(async () => subscribed.events().map((e) => e.data.rule_id), (ids) => ids.includes(logged) && ids.includes(notified), {
        what: "both firings at the subscribed webhook"
      })
      await waitFor(async () => other.events().length, (n) => n >= 1, { what: "the notify firing at the other webhook" })
      const atOther = other.events()
      expect(atOther.every((e) => e.type === "rule.triggered" && e.data.rule_id === notified && e.data.action === "notify")).toBe(true)
      // Deliveries are written with their events, and the log firing's event is in (it reached the
      // subscribed webhook): none of the other webhook's deliveries is of a log firing.
      const queued = await query<{ readonly rule_id: string }>(
        server.databaseUrl,
        (sql) =>
          sql`SELECT e.payload->'data'->>'rule_id' AS rule_id FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
            WHERE d.webhook_id = ${otherHook.body.id}`
      )
      expect(queued.length).toBeGreaterThan(0)
      expect(queued.every((d) => d.rule_id === notified)).toBe(true)
      expect(other.received[0]!.headers["x-service-signature"]).toBe(opensslSignature(secret, other.received[0]!.body))
    } finally {
      await subscribed.close()
      await other.close()
    }
  })

  it("one signal's events are delivered in the order they happened: its session starts, a rule fires, the budget warns, then is exceeded", async () => {
    const receiver = await startReceiver()
    try {
      const org = await newOrg()
      expect((await register(org, receiver.url, ["session.started", "rule.triggered", "budget.warning", "budget.exceeded"])).status).toBe(201)
      const rule = async (body: Record<string, unknown>) =>
        expect(
          (await call(server, "POST", "/api/v1/rules", { key: org.api_key_live!, body: { scope: "org", scope_id: org.org_id, action: "log", ...body } })).status
        ).toBe(201)
      await rule({ name: "tokens", type: "budget", condition: { window: "daily", metric: "tokens_total", threshold: 50 } })
      await rule({ name: "sonnet", type: "model_filter", condition: { model: { in: ["claude-sonnet-4"] } } })
      await rule({ name: "probe", type: "model_filter", condition: { model: { in: ["probe-model"] } } })
      // The probe rule fires once the rules are in force (they load as a whole); its signal has no tokens.
      await waitFor(
        async () =>
          (await call(server, "POST", "/engine/v1/signals", {
            key: org.license_key,
            body: { type: "post-tool", adapter: "cursor", session_id: "probe", metadata: { model: "probe-model" } }
          })).body,
        (b) => b.action === "log",
        { what: "the rules in force" }
      )
      expect((await signal(server, org, "post-tool", "measured")).status).toBe(200)
      await waitFor(async () => receiver.events().map((e) => e.type), (types) => types.includes("budget.exceeded"), { what: "the budget's events" })
      const events = receiver.events()
      const start = events.findIndex((e) => e.type === "session.started" && e.data.client_session_id === "measured")
      expect(start).toBeGreaterThanOrEqual(0)
      expect(events.slice(start).map((e) => e.type)).toEqual(["session.started", "rule.triggered", "budget.warning", "budget.exceeded"])
    } finally {
      await receiver.close()
    }
  })

  it("POST /webhooks/:id/test delivers a signed session.started now and answers the outcome", async () => {
    const receiver = await startReceiver((n) => ({ status: n === 1 ? 200 : 503 }))
    try {
      const org = await newOrg()
      const hook = await register(org, receiver.url)
      const ok = await call(server, "POST", `/api/v1/webhooks/${hook.body.id}/test`, { key: org.api_key_live! })
      expect(ok.status).toBe(200)
      expect(ok.body).toEqual({ delivered: true, status_code: 200, latency_ms: expect.any(Number), error: null })
      expect(receiver.events()[0]).toMatchObject({ type: "session.started", org_id: org.org_id, id: expect.stringMatching(/^wev_/) })
      expect(receiver.received[0]!.headers["x-service-signature"]).toBe(opensslSignature(secret, receiver.received[0]!.body))
      const failed = await call(server, "POST", `/api/v1/webhooks/${hook.body.id}/test`, { key: org.api_key_live! })
      expect(failed.body).toMatchObject({ delivered: false, status_code: 503, error: expect.stringContaining("503") })
      // A test is not queued nor retried, and does not count towards failing.
      const rows = await query<{ n: number }>(
        server.databaseUrl,
        (sql) => sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${hook.body.id}`
      )
      expect(rows[0]!.n).toBe(0)
      const closed = await startReceiver()
      const closedUrl = closed.url
      await closed.close()
      const gone = await register(org, closedUrl)
      const refused = await call(server, "POST", `/api/v1/webhooks/${gone.body.id}/test`, { key: org.api_key_live! })
      expect(refused.body).toMatchObject({ delivered: false, status_code: null, error: expect.stringContaining("connection failed") })
    } finally {
      await receiver.close()
    }
  })

  it("retries on the spec's schedule (scaled) until the receiver recovers, sending the same bytes each time", async () => {
    const receiver = await startReceiver((n) => ({ status: n <= 3 ? 500 : 204 }))
    try {
      const org = await newOrg()
      const hook = await register(org, receiver.url, ["session.started"])
      await signal(server, org, "user-prompt")
      await waitFor(async () => receiver.received.length, (n) => n >= 4, { what: "four attempts" })
      const attempts = await waitFor(() => attemptsOf(server.databaseUrl, hook.body.id), (rows) => rows.length === 4)
      expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 500], [3, 500], [4, 204]])
      // The persisted next-attempt times follow 30 s, 5 min, 30 min (× scale), the last none.
      const delays = attempts.map((a) => a.delay_ms)
      expect(delays[0]).toBeCloseTo(30_000 * scale, 3)
      expect(delays[1]).toBeCloseTo(300_000 * scale, 3)
      expect(delays[2]).toBeCloseTo(1_800_000 * scale, 3)
      expect(delays[3]).toBeNull()
      // Each attempt came no earlier than its scheduled time (a lower bound: no flaky upper bounds).
      const at = receiver.received.map((r) => r.at)
      for (let i = 1; i < 4; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(delays[i - 1]! - 5)
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1)
      expect(receiver.received.length).toBe(4)
      const delivery = await query<{ status: string; attempts: number }>(
        server.databaseUrl,
        (sql) => sql`SELECT status, attempts FROM webhook_deliveries WHERE webhook_id = ${hook.body.id}`
      )
      expect(delivery).toEqual([{ status: "delivered", attempts: 4 }])
    } finally {
      await receiver.close()
    }
  })

  it("a slow receiver (over WEBHOOK_TIMEOUT) counts as a failed attempt", async () => {
    const receiver = await startReceiver((n) => ({ status: 200, delayMs: n === 1 ? 2_500 : 0 }))
    try {
      const org = await newOrg()
      const hook = await register(org, receiver.url, ["session.started"])
      await signal(server, org, "user-prompt")
      const attempts = await waitFor(() => attemptsOf(server.databaseUrl, hook.body.id), (rows) => rows.length === 2)
      expect(attempts[0]).toMatchObject({ attempt: 1, status_code: null, error: expect.stringContaining("no response within") })
      expect(attempts[1]).toMatchObject({ attempt: 2, status_code: 200, error: null })
    } finally {
      await receiver.close()
    }
  })

  it("after 5 failed attempts the webhook is failing (still enabled), alerts once, queues, and resumes in order when re-enabled", async () => {
    const receiver = await startReceiver(() => ({ status: 500 }))
    try {
      const org = await newOrg()
      const hook = await register(org, receiver.url)
      const first = await signal(server, org, "user-prompt")
      const failing = await waitFor(
        async () => (await call(server, "GET", "/api/v1/webhooks", { key: org.api_key_live! })).body.data[0],
        (w) => w.failing === true,
        { timeoutMs: 30_000, what: "the webhook to be failing" }
      )
      expect(failing).toMatchObject({ id: hook.body.id, enabled: true, failing: true })
      expect(receiver.received).toHaveLength(5)
      expect(new Set(receiver.events().map((e) => e.id)).size).toBe(1)
      const attempts = await attemptsOf(server.databaseUrl, hook.body.id)
      expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5])
      expect(attempts.map((a) => a.delay_ms)).toEqual(
        [30_000 * scale, 300_000 * scale, 1_800_000 * scale, 7_200_000 * scale, null].map((d) => d === null ? null : expect.closeTo(d, 3))
      )

      const alerts = await call(server, "GET", "/api/v1/alerts", { key: org.api_key_live! })
      expect(alerts.status).toBe(200)
      expect(alerts.body.data).toEqual([{
        id: expect.stringMatching(/^alert_/),
        type: "webhook.failing",
        message: expect.stringContaining(hook.body.id),
        data: expect.objectContaining({ webhook_id: hook.body.id, last_status: 500 }),
        created_at: expect.any(String)
      }])

      // While failing, new events queue and nothing is sent.
      await signal(server, org, "session-end")
      const second = await signal(server, org, "user-prompt")
      expect(second.body.session_id).not.toBe(first.body.session_id)
      await waitFor(
        async () =>
          (await query<{ n: number }>(
            server.databaseUrl,
            (sql) => sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${hook.body.id} AND status = 'pending'`
          ))[0]!.n,
        (n) => n === 2
      )
      await new Promise((r) => setTimeout(r, 300)) // many dispatcher rounds (poll 20 ms): still nothing may go out
      expect(receiver.received).toHaveLength(5)

      receiver.behave(() => ({ status: 200 }))
      const enabled = await call(server, "POST", `/api/v1/webhooks/${hook.body.id}/enable`, { key: org.api_key_live! })
      expect(enabled.status).toBe(200)
      expect(enabled.body).toMatchObject({ id: hook.body.id, enabled: true, failing: false })
      await waitFor(async () => receiver.received.length, (n) => n >= 7, { what: "the queued events" })
      const resumed = receiver.events().slice(5)
      expect(resumed.map((e) => [e.type, e.data.session_id])).toEqual([
        ["session.ended", first.body.session_id],
        ["session.started", second.body.session_id]
      ])
      // The event that used up its attempts is not sent again; one alert in all.
      expect(receiver.received).toHaveLength(7)
      expect((await call(server, "GET", "/api/v1/alerts", { key: org.api_key_live! })).body.data).toHaveLength(1)
    } finally {
      await receiver.close()
    }
  }, 60_000)

  it("a deleted webhook gets nothing more", async () => {
    const receiver = await startReceiver(() => ({ status: 500 }))
    try {
      const org = await newOrg()
      const hook = await register(org, receiver.url, ["session.started"])
      await signal(server, org, "user-prompt")
      await waitFor(async () => receiver.received.length, (n) => n >= 1)
      expect((await call(server, "DELETE", `/api/v1/webhooks/${hook.body.id}`, { key: org.api_key_live! })).status).toBe(204)
      const seen = receiver.received.length
      await new Promise((r) => setTimeout(r, 500)) // past the next retries (30 ms, 300 ms scaled)
      expect(receiver.received.length).toBeLessThanOrEqual(seen + 1) // at most one attempt already in flight
      const rows = await query<{ n: number }>(
        server.databaseUrl,
        (sql) => sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${hook.body.id}`
      )
      expect(rows[0]!.n).toBe(0)
    } finally {
      await receiver.close()
    }
  })
})

describe("webhook delivery across a restart", () => {
  it("a dispatcher stopped mid-schedule loses and repeats nothing: the next node carries on", async () => {
    // 30 s → 0.3 s and 5 min → 3 s: the node is stopped during the 3 s wait.
    const slowEnv = { ...env, WEBHOOK_RETRY_SCALE: "0.01" }
    const receiver = await startReceiver((n) => ({ status: n <= 2 ? 500 : 200 }))
    let first: TestServer | undefined = await startServer({ env: slowEnv })
    let second: TestServer | undefined
    try {
      const org = await bootstrapOrg(first.databaseUrl, "restart", "team")
      const hook = await call(first, "POST", "/api/v1/webhooks", {
        key: org.api_key_live!,
        body: { url: receiver.url, events: ["session.started"], secret }
      })
      await signal(first, org, "user-prompt")
      await waitFor(() => attemptsOf(first!.databaseUrl, hook.body.id), (rows) => rows.length === 2, { what: "two attempts" })
      const databaseUrl = first.databaseUrl
      await first.stop()
      first = undefined
      expect(receiver.received).toHaveLength(2)
      second = await startServer({ databaseUrl, env: slowEnv })
      const attempts = await waitFor(() => attemptsOf(databaseUrl, hook.body.id), (rows) => rows.length === 3, { what: "the third attempt" })
      expect(attempts.map((a) => [a.attempt, a.status_code])).toEqual([[1, 500], [2, 500], [3, 200]])
      expect(receiver.received).toHaveLength(3)
      expect(new Set(receiver.events().map((e) => e.id)).size).toBe(1)
      // Nothing else turns up later either: a repeat would come at a dispatcher round (poll 20 ms).
      await new Promise((r) => setTimeout(r, 300))
      expect(receiver.received).toHaveLength(3)
    } finally {
      await first?.stop()
      await second?.stop()
      await receiver.close()
    }
  }, 60_000)
})
