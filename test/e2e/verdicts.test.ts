import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server?.stop())

/** A fresh org with one extra user, so each test's rules and usage are its own. */
const org = async (name: string) => {
  const o = await bootstrapOrg(server.databaseUrl, name, "team")
  return o
}
const rule = (o: Bootstrapped, body: Record<string, unknown>) => call(server, "POST", "/api/v1/rules", { key: o.api_key_live!, body })
const signal = (o: Bootstrapped, metadata: Record<string, unknown> = {}, type = "post-tool") =>
  call(server, "POST", "/engine/v1/signals", { key: o.license_key, body: { type, adapter: "claude-code", session_id: "s", metadata } })

/**
 * A rule is in force for the very next signal once its change was answered: the verdict of one
 * signal, which must already show it.
 */
const nextVerdict = async (send: () => ReturnType<typeof signal>, shows: (body: any) => boolean) => {
  const body = (await send()).body
  expect(shows(body), JSON.stringify(body)).toBe(true)
  return body
}

// Outbox rows are committed behind the verdicts; a management request first waits for them.
const outbox = async (o: Bootstrapped, type: string) => {
  await call(server, "GET", "/api/v1/rules?limit=1", { key: o.api_key_live! })
  return withStore(
    server.databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly payload: any }>`SELECT payload FROM webhook_events WHERE org_id = ${o.org_id} AND type = ${type}`
    })
  )
}

describe("verdicts", () => {
  it("a blocking model filter answers ok: false with the rule and its message; the usage is still recorded", async () => {
    const o = await org("filter")
    const r = await rule(o, {
      name: "No o3",
      type: "model_filter",
      scope: "org",
      scope_id: o.org_id,
      condition: { model: { in: ["o3"] } },
      action: "block",
      action_config: { message: "o3 is not allowed here" }
    })
    const blocked = await nextVerdict(() => signal(o, { model: "o3", tokens_in: 10 }), (b) => b.ok === false)
    expect(blocked).toMatchObject({ ok: false, action: "block", rule_id: r.body.id, message: "o3 is not allowed here" })
    const allowed = await signal(o, { model: "gpt-4o" })
    expect(allowed.body).toMatchObject({ ok: true })
    expect(allowed.body.action).toBeUndefined()
    // A dated release of a listed model is that model; a variant with its own name is not.
    expect((await signal(o, { model: "o3-2025-04-16" })).body).toMatchObject({ ok: false, rule_id: r.body.id })
    expect((await signal(o, { model: "o3-mini" })).body).toMatchObject({ ok: true })
    const events = await call(server, "GET", `/api/v1/events?session_id=${blocked.session_id}`, { key: o.api_key_live! })
    expect(events.body.data.map((e: { signal_id: string }) => e.signal_id)).toContain(blocked.signal_id)
    const fired = await outbox(o, "rule.triggered")
    expect(fired.map((e) => e.payload.data)).toContainEqual(expect.objectContaining({
      rule_id: r.body.id,
      action: "block",
      user_id: o.user_id,
      model: "o3",
      session_id: blocked.session_id,
      event_id: `evt_${blocked.signal_id.slice(4)}`
    }))
  })

  it("warn accepts with the warning; disabling the rule stops it, re-enabling brings it back", async () => {
    const o = await org("warner")
    const r = await rule(o, {
      name: "Projects please",
      type: "org_policy",
      scope: "user",
      scope_id: o.user_id,
      condition: { require_project_id: true },
      action: "warn"
    })
    const warned = await nextVerdict(() => signal(o), (b) => b.action === "warn")
    expect(warned).toMatchObject({ ok: true, action: "warn", rule_id: r.body.id })
    // A signal naming a project passes, and so do the later ones of its session, which are listed
    // under that project (the session is another adapter's, so the first one keeps none).
    const cursor = (metadata: Record<string, unknown>) =>
      call(server, "POST", "/engine/v1/signals", { key: o.license_key, body: { type: "post-tool", adapter: "cursor", session_id: "c", metadata } })
    expect((await cursor({ project_id: "proj_x" })).body.action).toBeUndefined()
    expect((await cursor({})).body.action).toBeUndefined()
    expect((await signal(o)).body.action).toBe("warn")
    await call(server, "PUT", `/api/v1/rules/${r.body.id}`, { key: o.api_key_live!, body: { enabled: false } })
    await nextVerdict(() => signal(o), (b) => b.action === undefined)
    await call(server, "PUT", `/api/v1/rules/${r.body.id}`, { key: o.api_key_live!, body: { enabled: true } })
    await nextVerdict(() => signal(o), (b) => b.action === "warn")
  })

  it("a user budget lets the signal that reaches it through, then blocks; warning and exceeded are recorded once", async () => {
    const o = await org("budget")
    const r = await rule(o, {
      name: "Daily tokens",
      type: "budget",
      scope: "user",
      scope_id: o.user_id,
      condition: { window: "daily", metric: "tokens_total", threshold: 100 },
      action: "block",
      action_config: { message: "daily token budget spent" }
    })
    const answers = []
    for (const tokens of [50, 40, 20, 5, 5]) answers.push((await signal(o, { tokens_in: tokens })).body)
    // 50, 90 (≥ 80: warning), 110 (≥ 100: exceeded, let through), then blocked.
    expect(answers.map((a) => a.ok)).toEqual([true, true, true, false, false])
    expect(answers[3]).toMatchObject({ action: "block", rule_id: r.body.id, message: "daily token budget spent" })
    const warning = await outbox(o, "budget.warning")
    const exceeded = await outbox(o, "budget.exceeded")
    expect(warning).toHaveLength(1)
    expect(exceeded).toHaveLength(1)
    expect(exceeded[0]!.payload.data).toMatchObject({
      rule_id: r.body.id,
      scope: "user",
      scope_id: o.user_id,
      threshold: 100,
      current: 110,
      window: "daily",
      metric: "tokens_total"
    })
  })

  it("a user budget set below usage already spent records its warning and exceeded at the next signal", async () => {
    const o = await org("late-budget")
    expect((await signal(o, { cost_usd: 0.1 })).body.ok).toBe(true)
    expect((await signal(o, { cost_usd: 0.2 })).body.ok).toBe(true)
    const r = await rule(o, {
      name: "Daily cost",
      type: "budget",
      scope: "user",
      scope_id: o.user_id,
      condition: { window: "daily", metric: "cost_usd", threshold: 0.25 },
      action: "log"
    })
    // Spent 0.3 before the rule existed: no signal crosses it now, the counter is past it.
    await nextVerdict(() => signal(o, { cost_usd: 0 }), (b) => b.action === "log")
    const exceeded = await outbox(o, "budget.exceeded")
    expect(exceeded).toHaveLength(1)
    expect(exceeded[0]!.payload.data).toMatchObject({ rule_id: r.body.id, scope: "user", scope_id: o.user_id, threshold: 0.25, current: 0.3 })
    expect(await outbox(o, "budget.warning")).toHaveLength(1)
  })

  it("a raised threshold reports its own warning and exceeded when usage reaches them", async () => {
    const o = await org("raised-budget")
    const r = await rule(o, {
      name: "Daily tokens",
      type: "budget",
      scope: "user",
      scope_id: o.user_id,
      condition: { window: "daily", metric: "tokens_total", threshold: 100 },
      action: "log"
    })
    expect((await signal(o, { tokens_in: 110 })).body.ok).toBe(true)
    const raised = await call(server, "PUT", `/api/v1/rules/${r.body.id}`, {
      key: o.api_key_live!,
      body: { condition: { window: "daily", metric: "tokens_total", threshold: 200 } }
    })
    expect(raised.status).toBe(200)
    // Past 100, below 200: the log stops once the new threshold is in force.
    await nextVerdict(() => signal(o), (b) => b.ok === true && b.action === undefined)
    await signal(o, { tokens_in: 60 }) // 170: past 80% of 200
    await signal(o, { tokens_in: 40 }) // 210: past 200
    await nextVerdict(() => signal(o), (b) => b.action === "log")
    const levels = async (type: string) => (await outbox(o, type)).map((e) => [e.payload.data.threshold, e.payload.data.current]).sort((a, b) => a[0] - b[0])
    expect(await levels("budget.warning")).toEqual([[100, 110], [200, 170]])
    expect(await levels("budget.exceeded")).toEqual([[100, 110], [200, 210]])
  })

  it("a project rule names the project_id signals carry, whether or not it was registered", async () => {
    const o = await org("project-rule")
    const r = await rule(o, {
      name: "No o3 in my-repo",
      type: "model_filter",
      scope: "project",
      scope_id: "my-repo",
      condition: { model: { in: ["o3"] } },
      action: "block",
      action_config: { message: "not in my-repo" }
    })
    expect(r.status).toBe(201)
    expect((await signal(o, { model: "o3", project_id: "another-repo" })).body).toMatchObject({ ok: true })
    expect((await signal(o, { model: "o3", project_id: "my-repo" })).body).toMatchObject({ ok: false, rule_id: r.body.id, message: "not in my-repo" })
  })

  it("a per-user limit counts each user's own usage", async () => {
    const o = await org("limits")
    await rule(o, {
      name: "Per-user cost",
      type: "user_limit",
      scope: "org",
      scope_id: o.org_id,
      condition: { window: "monthly", metric: "cost_usd", per_user: 1 },
      action: "block",
      action_config: { message: "monthly limit" }
    })
    expect((await signal(o, { cost_usd: 1.5 })).body.ok).toBe(true)
    expect((await signal(o, { cost_usd: 0.1 })).body).toMatchObject({ ok: false, message: "monthly limit" })
    const user = await call(server, "POST", "/api/v1/users", { key: o.api_key_live!, body: { email: "b@limits.test", name: "B" } })
    const license = await call(server, "POST", "/api/v1/license-keys", { key: o.api_key_live!, body: { user_id: user.body.id } })
    const other = await call(server, "POST", "/engine/v1/signals", {
      key: license.body.key,
      body: { type: "post-tool", adapter: "cursor", session_id: "b", metadata: { cost_usd: 0.5 } }
    })
    expect(other.body.ok).toBe(true)
  })
})
