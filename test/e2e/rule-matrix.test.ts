import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"

/**
 * Every rule type × scope × action, end to end: one org per combination, each with one rule that
 * the combination's triggering signal matches. The answer must carry the action (block: ok false
 * with the message), and every firing is recorded as a rule.triggered event.
 */
let server: TestServer

beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server?.stop())

const types = ["model_filter", "org_policy", "budget", "user_limit"] as const
const scopes = ["user", "team", "org", "project"] as const
const actions = ["block", "warn", "log", "notify"] as const

interface Case {
  readonly type: (typeof types)[number]
  readonly scope: (typeof scopes)[number]
  readonly action: (typeof actions)[number]
}

const cases: ReadonlyArray<Case> = types.flatMap((type) => scopes.flatMap((scope) => actions.map((action) => ({ type, scope, action }))))

const conditions = {
  model_filter: { model: { in: ["o3"] } },
  org_policy: { block_unknown_models: true },
  budget: { window: "daily", metric: "tokens_total", threshold: 10 },
  user_limit: { window: "monthly", metric: "tokens_total", per_user: 10 }
} as const

/** What each type needs: signals before the trigger (usage to reach the threshold) and the trigger. */
const signalsFor = (type: Case["type"]) => {
  switch (type) {
    case "model_filter":
      return { before: [{ model: "gpt-4o", tokens_in: 1 }], trigger: { model: "o3", tokens_in: 1 } }
    case "org_policy":
      return { before: [{ model: "gpt-4o", tokens_in: 1 }], trigger: { model: "mystery-model-9", tokens_in: 1 } }
    case "budget":
    case "user_limit":
      // 12 tokens reach the threshold of 10 and are let through; the next signal is acted on.
      return { before: [{ model: "gpt-4o", tokens_in: 12 }], trigger: { model: "gpt-4o", tokens_in: 1 } }
  }
}

interface Setup {
  readonly c: Case
  readonly org: Bootstrapped
  readonly projectId: string
  readonly ruleId: string
}

const setUp = async (c: Case, i: number): Promise<Setup> => {
  const org = await bootstrapOrg(server.databaseUrl, `matrix-${i}`, "team")
  const key = org.api_key_live!
  const project = await call(server, "POST", "/api/v1/projects", { key, body: { name: "p" } })
  const scopeId = { user: org.user_id, team: org.team_id, org: org.org_id, project: project.body.id as string }[c.scope]
  const rule = await call(server, "POST", "/api/v1/rules", {
    key,
    body: {
      name: `${c.type}/${c.scope}/${c.action}`,
      type: c.type,
      scope: c.scope,
      scope_id: scopeId,
      condition: conditions[c.type],
      action: c.action,
      action_config: c.action === "block" ? { message: `blocked by ${c.type}` } : {}
    }
  })
  expect(rule.status).toBe(201)
  return { c, org, projectId: project.body.id, ruleId: rule.body.id }
}

const send = (s: Setup, metadata: Record<string, unknown>) =>
  call(server, "POST", "/engine/v1/signals", {
    key: s.org.license_key,
    body: { type: "post-tool", adapter: "claude-code", session_id: "m", metadata: { ...metadata, project_id: s.projectId } }
  })

describe("rules: every type × scope × action", () => {
  it("answers each combination's triggering signal with its action and records the firing", async () => {
    const setups: Array<Setup> = []
    // A few at a time: each bootstrap is a transaction of its own.
    for (let i = 0; i < cases.length; i += 8) {
      setups.push(...await Promise.all(cases.slice(i, i + 8).map((c, j) => setUp(c, i + j))))
    }
    // Each rule is in force once its creation was answered: no wait.
    const answers = await Promise.all(setups.map(async (s) => {
      const { before, trigger } = signalsFor(s.c.type)
      const quiet = []
      for (const metadata of before) quiet.push((await send(s, metadata)).body)
      return { s, quiet, triggered: (await send(s, trigger)).body }
    }))

    // Every combination's outcome, compared as one table so a failure shows all that differ.
    const expected = answers.map(({ s }) => ({
      case: `${s.c.type} × ${s.c.scope} × ${s.c.action}`,
      quiet: "accepted",
      ok: s.c.action !== "block",
      action: s.c.action,
      rule: s.ruleId,
      message: s.c.action === "block" ? `blocked by ${s.c.type}` : undefined
    }))
    const actual = answers.map(({ s, quiet, triggered }) => ({
      case: `${s.c.type} × ${s.c.scope} × ${s.c.action}`,
      quiet: quiet.every((q) => q.ok === true && q.action === undefined) ? "accepted" : JSON.stringify(quiet),
      ok: triggered.ok,
      action: triggered.action,
      rule: triggered.rule_id,
      message: triggered.message
    }))
    expect(actual).toEqual(expected)

    // Outbox rows are committed behind the verdicts; a management request first waits for them.
    await call(server, "GET", "/api/v1/rules?limit=1", { key: answers[0]!.s.org.api_key_live! })
    const fired = await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly rule_id: string; readonly action: string; readonly user_id: string }>`
        SELECT payload->'data'->>'rule_id' AS rule_id, payload->'data'->>'action' AS action, payload->'data'->>'user_id' AS user_id
        FROM webhook_events WHERE type = 'rule.triggered'`
      })
    )
    for (const { s, triggered } of answers) {
      const mine = fired.filter((f) => f.rule_id === s.ruleId)
      expect(mine.length, `${s.c.type} × ${s.c.scope} × ${s.c.action}: rule.triggered`).toBeGreaterThanOrEqual(1)
      expect(mine.every((f) => f.action === s.c.action && f.user_id === s.org.user_id)).toBe(true)
      expect(triggered.session_id).toMatch(/^sess_/)
    }
  }, 120_000)

  it("in priority order the first matching block decides; a disabled rule and a lower-priority warn do not", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "priorities", "team")
    const key = org.api_key_live!
    const mk = (name: string, priority: number, action: string, enabled = true) =>
      call(server, "POST", "/api/v1/rules", {
        key,
        body: {
          name,
          type: "model_filter",
          scope: "org",
          scope_id: org.org_id,
          priority,
          enabled,
          condition: { model: { in: ["o3"] } },
          action,
          action_config: action === "block" ? { message: name } : {}
        }
      }).then((r) => r.body.id as string)
    await mk("warn first", 1, "warn")
    await mk("disabled block", 2, "block", false)
    const second = await mk("second block", 5, "block")
    await mk("third block", 9, "block")
    const answer = (await call(server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      body: { type: "post-tool", adapter: "a", session_id: "p", metadata: { model: "o3" } }
    })).body
    expect(answer).toMatchObject({ ok: false, action: "block", rule_id: second, message: "second block" })
  })

  it("an edited rule acts as edited: its condition and action change the next verdicts", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "edits", "team")
    const key = org.api_key_live!
    const send = (model: string) =>
      call(server, "POST", "/engine/v1/signals", {
        key: org.license_key,
        body: { type: "post-tool", adapter: "a", session_id: "e", metadata: { model } }
      }).then((r) => r.body)
    const created = await call(server, "POST", "/api/v1/rules", {
      key,
      body: { name: "no o3", type: "model_filter", scope: "org", scope_id: org.org_id, condition: { model: { in: ["o3"] } }, action: "warn" }
    })
    const id = created.body.id
    expect((await send("o3")).action).toBe("warn")
    const edited = await call(server, "PUT", `/api/v1/rules/${id}`, {
      key,
      body: { condition: { model: { in: ["gpt-4o"] } }, action: "block", action_config: { message: "gpt-4o is off" } }
    })
    expect(edited.status).toBe(200)
    const blocked = await send("gpt-4o")
    expect(blocked).toMatchObject({ action: "block", rule_id: id, message: "gpt-4o is off" })
    const o3 = await send("o3")
    expect(o3.ok).toBe(true)
    expect(o3.action).toBeUndefined()
    expect((await call(server, "DELETE", `/api/v1/rules/${id}`, { key })).status).toBe(204)
    const after = await send("gpt-4o")
    expect(after.ok).toBe(true)
    expect(after.action).toBeUndefined()
  })
})
