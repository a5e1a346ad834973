import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { partitionForKey } from "../../src/log/murmur2.ts"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

/**
 * Budgets over a team, an org or a project count every member's usage, across log partitions:
 * once one user spent the budget, another user in scope, whose signals another partition worker
 * folds, is acted on at their very next signal (one node holds every partition: exact).
 */
describe.each(logVariants())("shared budgets over %s", (_name, logEnv) => {
  let server: TestServer
  const partitions = 4

  beforeAll(async () => {
    server = await startServer({ env: logEnv() })
  })
  afterAll(() => server?.stop())

  const signal = (licenseKey: string, metadata: Record<string, unknown>) =>
    call(server, "POST", "/engine/v1/signals", { key: licenseKey, body: { type: "post-tool", adapter: "cursor", session_id: "s", metadata } })

  /** A new user of the org with a license key, on another partition than `avoid` when given. */
  const userOf = async (o: Bootstrapped, options: { readonly avoid?: string; readonly teamIds?: ReadonlyArray<string> } = {}) => {
    for (let i = 0; i < 50; i++) {
      const user = await call(server, "POST", "/api/v1/users", {
        key: o.api_key_live!,
        body: { email: `u${i}-${Math.random()}@shared.test`, name: "U", team_ids: options.teamIds ?? [] }
      })
      expect(user.status).toBe(201)
      if (options.avoid !== undefined && partitionForKey(user.body.id, partitions) === partitionForKey(options.avoid, partitions)) continue
      const license = await call(server, "POST", "/api/v1/license-keys", { key: o.api_key_live!, body: { user_id: user.body.id } })
      return { id: user.body.id as string, key: license.body.key as string }
    }
    throw new Error("no user landed on another partition")
  }

  const rule = (o: Bootstrapped, body: Record<string, unknown>) =>
    call(server, "POST", "/api/v1/rules", { key: o.api_key_live!, body }).then((r) => {
      expect(r.status).toBe(201)
      return r.body.id as string
    })

  /** Waits until the node's rule cache has the org's rules (a probe model filter warns). */
  const inForce = async (o: Bootstrapped, licenseKey: string) => {
    await rule(o, { name: "probe", type: "model_filter", scope: "org", scope_id: o.org_id, condition: { model: { in: ["probe"] } }, action: "warn" })
    await waitFor(async () => (await signal(licenseKey, { model: "probe" })).body, (b) => b.action === "warn", { timeoutMs: 5_000 })
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

  it("an org budget spent by one user blocks a second user on another partition; warning and exceeded fire once", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "org-budget", "team")
    const first = await userOf(o)
    const second = await userOf(o, { avoid: first.id })
    const id = await rule(o, {
      name: "Org daily tokens",
      type: "budget",
      scope: "org",
      scope_id: o.org_id,
      condition: { window: "daily", metric: "tokens_total", threshold: 1000 },
      action: "block",
      action_config: { message: "the org's daily tokens are spent" }
    })
    await inForce(o, first.key)
    expect((await signal(second.key, { tokens_in: 300 })).body.ok).toBe(true)
    // 300 + 600 = 900 (≥ 80%: warning), then + 200 = 1,100: reaches it, let through.
    expect((await signal(first.key, { tokens_in: 600 })).body.ok).toBe(true)
    expect((await signal(first.key, { tokens_in: 200 })).body.ok).toBe(true)
    expect((await signal(first.key, { tokens_in: 1 })).body).toMatchObject({ ok: false, action: "block", rule_id: id })
    // The second user's partition sees the other partitions' counts at once.
    const blocked = (await signal(second.key, { tokens_in: 1 })).body
    expect(blocked).toMatchObject({ ok: false, action: "block", rule_id: id, message: "the org's daily tokens are spent" })
    const warning = await outbox(o, "budget.warning")
    const exceeded = await outbox(o, "budget.exceeded")
    expect(warning.map((w) => w.payload.data)).toEqual([expect.objectContaining({ rule_id: id, scope: "org", scope_id: o.org_id, threshold: 1000 })])
    expect(exceeded).toHaveLength(1)
    expect(exceeded[0]!.payload.data).toMatchObject({
      rule_id: id,
      rule_name: "Org daily tokens",
      scope: "org",
      scope_id: o.org_id,
      threshold: 1000,
      window: "daily",
      metric: "tokens_total"
    })
    expect(exceeded[0]!.payload.data.current).toBeGreaterThanOrEqual(1000)
  })

  it.each(["team", "org", "project"] as const)(
    "a %s budget crossed by one user blocks the very next signal of a user on another partition",
    async (scope) => {
      const o = await bootstrapOrg(server.databaseUrl, `exact-${scope}`, "team")
      const team = (await call(server, "POST", "/api/v1/teams", { key: o.api_key_live!, body: { name: "Core" } })).body.id as string
      const project = (await call(server, "POST", "/api/v1/projects", { key: o.api_key_live!, body: { name: "core" } })).body.id as string
      const first = await userOf(o, { teamIds: [team] })
      const second = await userOf(o, { avoid: first.id, teamIds: [team] })
      const scopeId = scope === "team" ? team : scope === "org" ? o.org_id : project
      const id = await rule(o, {
        name: `${scope} daily tokens`,
        type: "budget",
        scope,
        scope_id: scopeId,
        condition: { window: "daily", metric: "tokens_total", threshold: 1000 },
        action: "block",
        action_config: { message: "spent" }
      })
      await inForce(o, first.key)
      const inScope = scope === "project" ? { project_id: project } : {}
      expect((await signal(second.key, { ...inScope, tokens_in: 1 })).body.ok).toBe(true)
      // Crossing it: let through; whoever in scope sends next is blocked, whichever partition folds it.
      expect((await signal(first.key, { ...inScope, tokens_in: 1_100 })).body.ok).toBe(true)
      expect((await signal(second.key, { ...inScope, tokens_in: 1 })).body).toMatchObject({ ok: false, action: "block", rule_id: id, message: "spent" })
      expect((await signal(first.key, { ...inScope, tokens_in: 1 })).body).toMatchObject({ ok: false, rule_id: id })
    }
  )

  it("lets exactly the signals before the crossing through while users on every partition send at once", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "concurrent", "team")
    // One user per partition.
    const users: Array<{ readonly id: string; readonly key: string }> = []
    while (users.length < partitions) {
      const user = await userOf(o)
      if (!users.some((u) => partitionForKey(u.id, partitions) === partitionForKey(user.id, partitions))) users.push(user)
    }
    const id = await rule(o, {
      name: "Org daily tokens",
      type: "budget",
      scope: "org",
      scope_id: o.org_id,
      condition: { window: "daily", metric: "tokens_in", threshold: 1000 },
      action: "block",
      action_config: { message: "spent" }
    })
    await inForce(o, users[0]!.key)
    // 10 tokens each: a signal is let through while the org's usage before it is under 1,000, so
    // exactly 100 are, in whatever order the partitions fold them.
    const answers = (await Promise.all(users.map(async (u) => {
      const mine: Array<{ readonly ok: boolean; readonly rule_id?: string }> = []
      for (let i = 0; i < 40; i++) mine.push((await signal(u.key, { tokens_in: 10 })).body)
      return mine
    }))).flat()
    expect(answers.filter((a) => a.ok)).toHaveLength(100)
    expect(answers.filter((a) => !a.ok).every((a) => a.rule_id === id)).toBe(true)
  })

  it("a team budget counts and acts on the team's members only", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "team-budget", "team")
    const team = await call(server, "POST", "/api/v1/teams", { key: o.api_key_live!, body: { name: "Platform" } })
    const member = await userOf(o, { teamIds: [team.body.id] })
    const colleague = await userOf(o, { avoid: member.id, teamIds: [team.body.id] })
    const outsider = await userOf(o)
    const id = await rule(o, {
      name: "Platform monthly spend",
      type: "budget",
      scope: "team",
      scope_id: team.body.id,
      condition: { window: "monthly", metric: "cost_usd", threshold: 2 },
      action: "warn"
    })
    await inForce(o, member.key)
    // The outsider's spend is not the team's.
    expect((await signal(outsider.key, { cost_usd: 5 })).body.action).toBeUndefined()
    expect((await signal(member.key, { cost_usd: 2.5 })).body.action).toBeUndefined()
    const warned = (await signal(colleague.key, { cost_usd: 0.01 })).body
    expect(warned).toMatchObject({ ok: true, action: "warn", rule_id: id })
    expect((await signal(outsider.key, { cost_usd: 0.01 })).body.action).toBeUndefined()
  })

  it("a project budget counts the signals of that project, whoever sends them", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "project-budget", "team")
    const project = await call(server, "POST", "/api/v1/projects", { key: o.api_key_live!, body: { name: "web" } })
    const a = await userOf(o)
    const b = await userOf(o, { avoid: a.id })
    const id = await rule(o, {
      name: "Web daily tokens",
      type: "budget",
      scope: "project",
      scope_id: project.body.id,
      condition: { window: "daily", metric: "tokens_in", threshold: 100 },
      action: "block",
      action_config: { message: "web is over budget" }
    })
    await inForce(o, a.key)
    expect((await signal(a.key, { tokens_in: 500 })).body.ok).toBe(true) // another project's usage: not counted
    expect((await signal(a.key, { tokens_in: 120, project_id: project.body.id })).body.ok).toBe(true)
    const blocked = (await signal(b.key, { tokens_in: 1, project_id: project.body.id })).body
    expect(blocked).toMatchObject({ ok: false, rule_id: id, message: "web is over budget" })
    expect((await signal(b.key, { tokens_in: 1, project_id: "another" })).body.ok).toBe(true)
  })

  it("a signal without its own project_id counts in its session's project, where its event is listed", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "session-project", "team")
    const project = await call(server, "POST", "/api/v1/projects", { key: o.api_key_live!, body: { name: "api" } })
    const a = await userOf(o)
    const b = await userOf(o, { avoid: a.id })
    await rule(o, {
      name: "API daily tokens",
      type: "budget",
      scope: "project",
      scope_id: project.body.id,
      condition: { window: "daily", metric: "tokens_in", threshold: 100 },
      action: "block",
      action_config: { message: "api is over budget" }
    })
    await inForce(o, b.key)
    // a's session takes the project from its first signal that names one; the next names none.
    const send = (metadata: Record<string, unknown>) =>
      call(server, "POST", "/engine/v1/signals", { key: a.key, body: { type: "post-tool", adapter: "claude-code", session_id: "p", metadata } })
    expect((await send({ tokens_in: 10, project_id: project.body.id })).body.ok).toBe(true)
    const unnamed = await send({ tokens_in: 200 })
    expect(unnamed.body.ok).toBe(true)
    const listed = await call(server, "GET", `/api/v1/events?project_id=${project.body.id}`, { key: o.api_key_live! })
    expect(listed.body.data.map((e: { signal_id: string }) => e.signal_id)).toContain(unnamed.body.signal_id)
    // 210 tokens counted in the project: b's signal in it is blocked.
    const blocked = (await signal(b.key, { tokens_in: 1, project_id: project.body.id })).body
    expect(blocked.action).toBe("block")
  })

  it("counts usage in the windows of the org's time zone once the org sets one", async () => {
    const o = await bootstrapOrg(server.databaseUrl, "zoned", "team")
    // A zone whose date differs from UTC's right now: UTC+14 from 10:00 UTC on, UTC-12 before noon.
    const zone = new Date().getUTCHours() >= 10 ? "Pacific/Kiritimati" : "Etc/GMT+12"
    const patched = await call(server, "PATCH", "/api/v1/org", { key: o.api_key_live!, body: { time_zone: zone } })
    expect(patched.status).toBe(200)
    const res = await signal(o.license_key, { tokens_in: 7 })
    const day = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" })
      .format(new Date(Date.parse((await call(server, "GET", `/api/v1/events/evt_${res.body.signal_id.slice(4)}`, { key: o.api_key_live! })).body.ts)))
    expect(day).not.toBe(new Date().toISOString().slice(0, 10))
    const windows = await waitFor(() =>
      withStore(
        server.databaseUrl,
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return yield* sql<{ readonly window_key: string; readonly tokens_in: string }>`
          SELECT window_key, tokens_in::text FROM scope_usage WHERE org_id = ${o.org_id} AND scope = 'org' ORDER BY window_key`
        })
      ), (rows) => rows.length === 2)
    expect(windows).toEqual([{ window_key: `d:${day}`, tokens_in: "7" }, { window_key: `m:${day.slice(0, 7)}`, tokens_in: "7" }])
  })
})
