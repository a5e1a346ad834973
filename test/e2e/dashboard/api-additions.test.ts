import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../../support/harness.ts"
import { startReceiver } from "../../support/receiver.ts"
import { waitFor } from "../../support/wait.ts"

// The management API's additions the dashboard reads: events' verdicts, events by verdict
// action and by type, every user's goals, a webhook's deliveries, and what the service raised.

let server: TestServer
let org: Bootstrapped
beforeAll(async () => {
  server = await startServer({
    env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_RETRY_SCALE: "0.001", WEBHOOK_TIMEOUT: "1 second", WEBHOOK_POLL_INTERVAL: "20 millis" }
  })
  org = await bootstrapOrg(server.databaseUrl, "additions", "team")
})
afterAll(() => server?.stop())

const signal = (model: string, type = "post-tool") =>
  call(server, "POST", "/engine/v1/signals", {
    key: org.license_key,
    headers: { "idempotency-key": randomUUID() },
    body: { type, adapter: "claude-code", session_id: "s-1", metadata: { model, tokens_in: 100, tokens_out: 10 } }
  })

const get = (path: string) => call(server, "GET", path, { key: org.api_key_live! })

describe("management API additions for the dashboard", () => {
  it("events carry the verdict a rule gave them, and can be listed by its action and by type", async () => {
    const rule = await call(server, "POST", "/api/v1/rules", {
      key: org.api_key_live!,
      body: {
        name: "No o3",
        type: "model_filter",
        scope: "org",
        scope_id: org.org_id,
        condition: { model: { in: ["o3"] } },
        action: "block",
        action_config: { message: "no o3" }
      }
    })
    const allowed = await signal("claude-sonnet-4")
    const blocked = await signal("o3")
    expect(blocked.body.action).toBe("block")
    const all = await get("/api/v1/events")
    const byId = new Map(all.body.data.map((e: { signal_id: string }) => [e.signal_id, e]))
    expect(byId.get(allowed.body.signal_id)).toMatchObject({ verdict: null })
    expect(byId.get(blocked.body.signal_id)).toMatchObject({
      verdict: { ok: false, action: "block", rule_id: rule.body.id, message: "no o3" }
    })
    const blocks = await get("/api/v1/events?action=block")
    expect(blocks.body.data.map((e: { signal_id: string }) => e.signal_id)).toEqual([blocked.body.signal_id])
    expect((await get("/api/v1/events?action=warn")).body.data).toEqual([])
    expect((await get("/api/v1/events?action=deny")).status).toBe(400)
    const prompts = await get("/api/v1/events?type=user-prompt")
    expect(prompts.body.data).toEqual([])
    expect((await get("/api/v1/events?type=post-tool")).body.data).toHaveLength(2)
  })

  it("lists every user's goals, newest first, by user and status, a page at a time", async () => {
    const made = []
    for (const description of ["first goal", "second goal", "third goal"]) {
      const res = await call(server, "POST", "/engine/v1/goals", { key: org.license_key, body: { description } })
      expect(res.status).toBe(201)
      made.push(res.body.goal)
    }
    await call(server, "PATCH", `/engine/v1/goals/${made[0].id}`, { key: org.license_key, body: { status: "completed" } })
    const page1 = await get("/api/v1/goals?limit=2")
    expect(page1.status).toBe(200)
    expect(page1.body.data.map((g: { description: string }) => g.description)).toEqual(["third goal", "second goal"])
    expect(page1.body.data[0]).toMatchObject({ user_id: org.user_id, status: "active", drift_count: 0, last_drift_at: null })
    expect(page1.body.has_more).toBe(true)
    const page2 = await get(`/api/v1/goals?limit=2&cursor=${page1.body.cursor}`)
    expect(page2.body).toMatchObject({ data: [{ description: "first goal", status: "completed" }], has_more: false, cursor: "" })
    expect((await get("/api/v1/goals?status=completed")).body.data).toHaveLength(1)
    expect((await get("/api/v1/goals?user_id=user_nobody")).body.data).toEqual([])
    expect((await call(server, "GET", "/api/v1/goals", { key: org.api_key_test! })).body.data).toEqual([])
    expect((await get("/api/v1/goals?status=done")).status).toBe(400)
  })

  it("lists a webhook's deliveries with every attempt, newest first, in its org only", async () => {
    const receiver = await startReceiver(() => ({ status: 500 }))
    try {
      const own = await bootstrapOrg(server.databaseUrl, "deliveries", "team")
      const hook = await call(server, "POST", "/api/v1/webhooks", {
        key: own.api_key_live!,
        body: { url: receiver.url, events: ["session.started"], secret: "a-webhook-secret-of-at-least-32-characters" }
      })
      const path = `/api/v1/webhooks/${hook.body.id}/deliveries`
      expect((await call(server, "GET", path, { key: own.api_key_live! })).body).toEqual({ data: [], cursor: "", has_more: false })
      await call(server, "POST", "/engine/v1/signals", {
        key: own.license_key,
        body: { type: "user-prompt", adapter: "claude-code", session_id: "d-1", metadata: {} }
      })
      const page = await waitFor(
        async () => (await call(server, "GET", path, { key: own.api_key_live! })).body,
        (b) => b.data?.[0]?.attempts?.length === 5,
        { timeoutMs: 30_000, what: "five attempts" }
      )
      expect(page.data).toHaveLength(1)
      expect(page.data[0]).toMatchObject({ event_id: expect.stringMatching(/^wev_/), type: "session.started", delivered_at: null })
      expect(page.data[0].attempts.map((a: { attempt: number; status_code: number }) => [a.attempt, a.status_code])).toEqual(
        [1, 2, 3, 4, 5].map((n) => [n, 500])
      )
      expect(page.data[0].attempts[0].next_attempt_at).not.toBeNull()
      expect((await call(server, "GET", path, { key: org.api_key_live! })).status).toBe(404)
      expect((await call(server, "GET", path, { key: own.api_key_test! })).status).toBe(404)
    } finally {
      await receiver.close()
    }
  })

  it("lists what the service raised, newest first, by type, without any webhook", async () => {
    const own = await bootstrapOrg(server.databaseUrl, "raised", "team")
    await call(server, "POST", "/api/v1/rules", {
      key: own.api_key_live!,
      body: {
        name: "Tiny budget",
        type: "budget",
        scope: "org",
        scope_id: own.org_id,
        condition: { window: "daily", metric: "tokens_total", threshold: 150 },
        action: "warn"
      }
    })
    for (let i = 0; i < 2; i++) {
      await call(server, "POST", "/engine/v1/signals", {
        key: own.license_key,
        body: { type: "post-tool", adapter: "claude-code", session_id: "r-1", metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 10 } }
      })
    }
    const all = await call(server, "GET", "/api/v1/webhook-events", { key: own.api_key_live! })
    expect(all.status).toBe(200)
    expect(all.body.data.map((n: { type: string }) => n.type)).toEqual(["budget.exceeded", "budget.warning", "session.started"])
    expect(all.body.data[0]).toMatchObject({
      id: expect.stringMatching(/^wev_/),
      org_id: own.org_id,
      data: { rule_name: "Tiny budget", threshold: 150, metric: "tokens_total", window: "daily" }
    })
    const warnings = await call(server, "GET", "/api/v1/webhook-events?type=budget.warning", { key: own.api_key_live! })
    expect(warnings.body.data.map((n: { type: string }) => n.type)).toEqual(["budget.warning"])
    const first = await call(server, "GET", "/api/v1/webhook-events?limit=1", { key: own.api_key_live! })
    const second = await call(server, "GET", `/api/v1/webhook-events?limit=1&cursor=${first.body.cursor}`, { key: own.api_key_live! })
    expect(second.body.data[0].type).toBe("budget.warning")
    expect((await call(server, "GET", "/api/v1/webhook-events", { key: own.api_key_test! })).body.data).toEqual([])
    expect((await call(server, "GET", "/api/v1/webhook-events?type=nope", { key: own.api_key_live! })).status).toBe(400)
  })
})
