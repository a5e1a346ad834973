import { describe, expect, it } from "@effect/vitest"
import type { Rule } from "../../src/domain/rules.ts"
import { foldHarness, rule } from "../support/fold-harness.ts"

/**
 * Budgets and per-user limits as an admin sees them: what the users' tools are answered, the
 * webhook events, the spend per scope and the budgets page, through the engine core in process
 * (test/support/fold-harness.ts). alice is on partition 1, bob, carol and dave on 2, erin on 0.
 */

/** $1 per 1,000 tokens in, $4 per 1,000 out: costs read at a glance. */
const prices = { "house-model": { input: 1_000, output: 4_000 } }

const budget = (over: Partial<Rule> & { readonly condition: Rule["condition"] }) => rule({ type: "budget", ...over })

const dataOf = (h: ReturnType<typeof foldHarness>, type: "budget.warning" | "budget.exceeded" | "rule.triggered") => h.notices(type).map((n) => n.payload.data)

describe("a budget", () => {
  it("crossed by one signal lets that signal through and blocks the next, which still counts", () => {
    const cap = budget({
      scope: "user",
      scope_id: "alice",
      action: "block",
      action_config: { message: "Daily budget spent" },
      condition: { window: "daily", metric: "cost_usd", threshold: 5 }
    })
    const h = foldHarness({ rules: [cap], prices })
    expect(h.signal("alice", { model: "house-model", tokens_in: 3_000 })).toMatchObject({ ok: true })
    const crossing = h.signal("alice", { model: "house-model", tokens_in: 1_000, tokens_out: 250 })
    expect(crossing).toEqual({ ok: true, signal_id: crossing.signal_id, session_id: crossing.session_id })
    const next = h.signal("alice", { model: "house-model", tokens_in: 500 })
    expect(next).toEqual({
      ok: false,
      signal_id: next.signal_id,
      session_id: crossing.session_id,
      action: "block",
      rule_id: cap.id,
      message: "Daily budget spent"
    })
    // Usage that happened, happened: the blocked signal is in the session, the events and the counters.
    expect(h.userSpend("alice")).toEqual({ cost_usd: 5.5, tokens_in: 4_500, tokens_out: 250 })
    expect(h.sessions("alice")).toMatchObject([{ signal_count: 3, tokens_in: 4_500, tokens_out: 250, cost_usd: 5.5 }])
    expect(h.events("alice").map((e) => e.cost_usd)).toEqual([3, 2, 0.5])
    expect(dataOf(h, "budget.warning")).toEqual([
      { rule_id: cap.id, rule_name: cap.name, scope: "user", scope_id: "alice", threshold: 5, current: 5, window: "daily", metric: "cost_usd" }
    ])
    expect(dataOf(h, "budget.exceeded")).toEqual([
      { rule_id: cap.id, rule_name: cap.name, scope: "user", scope_id: "alice", threshold: 5, current: 5, window: "daily", metric: "cost_usd" }
    ])
    const [triggered] = h.notices("rule.triggered")
    expect(triggered!.payload).toEqual({
      id: triggered!.id,
      type: "rule.triggered",
      org_id: "org_1",
      ts: "2026-03-02T09:00:00.000Z",
      data: {
        rule_id: cap.id,
        rule_name: cap.name,
        action: "block",
        user_id: "alice",
        model: "house-model",
        session_id: crossing.session_id,
        event_id: `evt_${next.signal_id.slice(4)}`
      }
    })
    expect(h.notices("budget.exceeded")[0]).toMatchObject({
      org_id: "org_1",
      environment: "live",
      payload: { org_id: "org_1", ts: "2026-03-02T09:00:00.000Z" }
    })
    expect(h.standing(cap.id)).toMatchObject({ current: 5.5, limit: 5, percent: 110, state: "exceeded" })
    // Another user is not in the scope.
    expect(h.signal("bob", { model: "house-model", tokens_in: 9_000 }).ok).toBe(true)
  })

  it("warns once at 80% and reports exceeded once at 100%; a warn rule then fires on every further signal", () => {
    const watch = budget({ condition: { window: "daily", metric: "tokens_total", threshold: 1_000 }, action_config: { message: "heads up" } })
    const h = foldHarness({ rules: [watch] })
    const answers = [500, 299, 1, 150, 50, 10].map((tokens) => h.signal("alice", { tokens_in: tokens }))
    expect(answers.map((a) => [a.ok, a.action ?? null])).toEqual([
      [true, null],
      [true, null],
      [true, null],
      [true, null],
      [true, null],
      [true, "warn"]
    ])
    expect(answers[5]).toMatchObject({ rule_id: watch.id, message: "heads up" })
    expect(h.notices().filter((n) => n.type !== "session.started").map((n) => [n.type, n.payload.data.current ?? null])).toEqual([
      ["budget.warning", 800],
      ["budget.exceeded", 1_000],
      ["rule.triggered", null]
    ])
    expect(dataOf(h, "budget.exceeded")[0]).toMatchObject({ scope: "org", scope_id: "org_1", threshold: 1_000, metric: "tokens_total" })
    // The events' ids come from their cause: one per rule, scope, window, threshold and level.
    expect(new Set(h.notices().map((n) => n.id)).size).toBe(h.notices().length)
  })

  it("of a team is shared by its members on other partitions: after the crossing every member is blocked", () => {
    const team = budget({
      scope: "team",
      scope_id: "team_a",
      action: "block",
      action_config: { message: "Team budget spent" },
      condition: { window: "daily", metric: "tokens_in", threshold: 1_000 }
    })
    const h = foldHarness({ teams: { alice: ["team_a"], bob: ["team_a"], carol: ["team_b"] }, rules: [team] })
    expect(h.signal("alice", { tokens_in: 900 }).ok).toBe(true)
    expect(h.signal("bob", { tokens_in: 100 }).ok).toBe(true)
    expect(h.signal("alice", { tokens_in: 1 })).toMatchObject({ ok: false, rule_id: team.id, message: "Team budget spent" })
    expect(h.signal("bob", { tokens_in: 1 })).toMatchObject({ ok: false, rule_id: team.id })
    expect(h.signal("carol", { tokens_in: 5_000 }).ok).toBe(true)
    expect(h.spend("team", "team_a").tokens_in).toBe(1_002)
    expect(h.spend("team", "team_b").tokens_in).toBe(5_000)
    expect(h.spend("org", "org_1").tokens_in).toBe(6_002)
    expect(h.standing(team.id)).toMatchObject({ current: 1_002, state: "exceeded", percent: 100.2 })
    // Reported once, by the partition whose signal crossed it.
    expect(dataOf(h, "budget.exceeded")).toEqual([
      { rule_id: team.id, rule_name: team.name, scope: "team", scope_id: "team_a", threshold: 1_000, current: 1_000, window: "daily", metric: "tokens_in" }
    ])
    expect(dataOf(h, "budget.warning")).toHaveLength(1)
    // A user who joins the team is in its budget from their next signal on.
    h.setTeams("carol", ["team_b", "team_a"])
    expect(h.signal("carol", { tokens_in: 1 }).ok).toBe(false)
  })

  it("counts a signal in its org, each of its teams and its project, daily and monthly, and nowhere else", () => {
    const h = foldHarness({ teams: { alice: ["team_a", "team_b"] } })
    h.signal("alice", { tokens_in: 5, project_id: "proj_x" })
    h.signal("alice", { session_id: "cs-2", tokens_in: 1 })
    // An empty project_id names no project.
    h.signal("bob", { tokens_in: 2, project_id: "" })
    // A row per scope window and partition: alice's is partition 1, bob's 2.
    const rows = h.projections().scopeUsage.map((r) => [r.scope, r.scope_id, r.window_key, r.partition, r.tokens_in])
    expect(rows.sort()).toEqual([
      ["org", "org_1", "d:2026-03-02", 1, 6],
      ["org", "org_1", "m:2026-03", 1, 6],
      ["org", "org_1", "d:2026-03-02", 2, 2],
      ["org", "org_1", "m:2026-03", 2, 2],
      ["project", "proj_x", "d:2026-03-02", 1, 5],
      ["project", "proj_x", "m:2026-03", 1, 5],
      ["team", "team_a", "d:2026-03-02", 1, 6],
      ["team", "team_a", "m:2026-03", 1, 6],
      ["team", "team_b", "d:2026-03-02", 1, 6],
      ["team", "team_b", "m:2026-03", 1, 6]
    ].sort())
    expect(h.spend("org", "org_1")).toEqual({ cost_usd: 0, tokens_in: 8, tokens_out: 0 })
  })

  it("follows a user who changes teams mid-day from their next signal on", () => {
    const h = foldHarness({ teams: { alice: ["team_a", "team_b"] } })
    h.signal("alice", { tokens_in: 1 })
    h.setTeams("alice", ["team_a", "team_c"])
    h.signal("alice", { tokens_in: 10 })
    h.setTeams("alice", ["team_d", "team_e"])
    h.signal("alice", { tokens_in: 100 })
    expect(["team_a", "team_b", "team_c", "team_d", "team_e"].map((t) => h.spend("team", t).tokens_in)).toEqual([11, 1, 10, 100, 100])
  })

  it("counts signals sent together in order: the one after the crossing in the same append is blocked", () => {
    const team = budget({ scope: "team", scope_id: "team_a", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1_000 } })
    const h = foldHarness({ teams: { alice: ["team_a"], bob: ["team_a"], dave: ["team_a"] }, rules: [team] })
    // bob and dave share a partition (one batch); alice's partition folds first.
    const answers = h.sendAll([["bob", { tokens_in: 600 }], ["alice", { tokens_in: 400 }], ["dave", { tokens_in: 10 }], ["bob", { tokens_in: 10 }]])
    expect(answers.map((a) => a.ok)).toEqual([true, true, false, false])
    expect(h.spend("team", "team_a").tokens_in).toBe(1_020)
    expect(h.notices("budget.exceeded")).toHaveLength(1)
  })

  it("of a project counts the signals its sessions are listed under", () => {
    const project = budget({
      scope: "project",
      scope_id: "proj_web",
      action: "block",
      condition: { window: "daily", metric: "tokens_out", threshold: 100 }
    })
    const h = foldHarness({ rules: [project] })
    h.signal("alice", { project_id: "proj_web", tokens_out: 60 })
    // No project of its own: the session's.
    h.signal("alice", { tokens_out: 40 })
    expect(h.signal("alice", { tokens_out: 1 })).toMatchObject({ ok: false, rule_id: project.id })
    expect(h.events("alice").map((e) => e.project_id)).toEqual(["proj_web", "proj_web", "proj_web"])
    // Another project's signals, in another session, are not in it.
    expect(h.signal("alice", { session_id: "cs-2", project_id: "proj_api", tokens_out: 500 }).ok).toBe(true)
    expect(h.signal("bob", { tokens_out: 500 }).ok).toBe(true)
    expect(h.spend("project", "proj_web").tokens_out).toBe(101)
    expect(h.spend("project", "proj_api").tokens_out).toBe(500)
  })

  it("created after the spend reports the levels already reached and blocks the next signal", () => {
    const h = foldHarness({ prices })
    h.signal("alice", { model: "house-model", tokens_in: 1_200 })
    const late = budget({ action: "block", condition: { window: "daily", metric: "cost_usd", threshold: 1 } })
    h.setRules([late])
    expect(h.signal("alice", { model: "house-model", tokens_in: 100 })).toMatchObject({ ok: false, rule_id: late.id })
    expect(dataOf(h, "budget.warning").map((d) => d.current)).toEqual([1.3])
    expect(dataOf(h, "budget.exceeded").map((d) => d.current)).toEqual([1.3])
  })

  it("raised after its levels were reported reports the new threshold's levels when they are reached", () => {
    const first = budget({ condition: { window: "daily", metric: "tokens_in", threshold: 100 } })
    const h = foldHarness({ rules: [first] })
    h.signal("alice", { tokens_in: 100 })
    h.setRules([{ ...first, condition: { window: "daily", metric: "tokens_in", threshold: 200 } }])
    h.signal("alice", { tokens_in: 50 })
    expect(h.notices("budget.warning")).toHaveLength(1)
    h.signal("alice", { tokens_in: 10 })
    expect(dataOf(h, "budget.warning").map((d) => [d.threshold, d.current])).toEqual([[100, 100], [200, 160]])
    // Set back to the first threshold: those levels were reported already.
    h.setRules([first])
    h.signal("alice", { tokens_in: 1 })
    expect(h.notices("budget.exceeded").map((n) => n.payload.data.threshold)).toEqual([100])
  })

  it("measures what its metric says: tokens in, out, their total, or dollars", () => {
    const metric = (m: "tokens_in" | "tokens_out" | "tokens_total" | "cost_usd", threshold: number) =>
      budget({ name: m, condition: { window: "monthly", metric: m, threshold } })
    const rules = [metric("tokens_in", 1_000), metric("tokens_out", 1_000), metric("tokens_total", 1_000), metric("cost_usd", 10)]
    const h = foldHarness({ rules, prices })
    h.signal("alice", { model: "house-model", tokens_in: 600, tokens_out: 300 })
    h.signal("bob", { model: "house-model", tokens_in: 100, tokens_out: 200 })
    expect(rules.map((r) => [h.standing(r.id).current, h.standing(r.id).state])).toEqual([
      [700, "ok"],
      [500, "ok"],
      [1_200, "exceeded"],
      [2.7, "ok"]
    ])
    expect(h.notices("budget.exceeded").map((n) => n.payload.data.metric)).toEqual(["tokens_total"])
    expect(h.standing(rules[3]!.id)).toMatchObject({
      percent: 27,
      window: "monthly",
      window_start: "2026-03-01T00:00:00.000Z",
      window_end: "2026-04-01T00:00:00.000Z"
    })
  })

  it("judges cost with the adapter's own figure where it sends one, the price table's otherwise", () => {
    const cap = budget({ scope: "user", scope_id: "alice", action: "block", condition: { window: "daily", metric: "cost_usd", threshold: 1 } })
    const h = foldHarness({ rules: [cap], prices })
    h.signal("alice", { model: "house-model", tokens_in: 10, cost_usd: 0.999999999 })
    expect(h.signal("alice", { model: "house-model", tokens_in: 1 }).ok).toBe(true)
    expect(h.signal("alice", { model: "house-model" }).ok).toBe(false)
    expect(h.events("alice").map((e) => [e.cost_usd, e.cost_estimated])).toEqual([[0.999999999, false], [0.001, true], [0, true]])
    expect(dataOf(h, "budget.exceeded").map((d) => d.current)).toEqual([1.000999999])
  })

  it("reports dollars summed to the nano-dollar, as the counters keep them", () => {
    const cap = budget({ condition: { window: "daily", metric: "cost_usd", threshold: 0.3 } })
    const h = foldHarness({ rules: [cap] })
    h.signal("alice", { cost_usd: 0.1 })
    h.signal("bob", { cost_usd: 0.2 })
    // 0.1 + 0.2 is 0.30000000000000004 in floating point.
    expect(dataOf(h, "budget.exceeded").map((d) => d.current)).toEqual([0.3])
    // The two partitions' rows add up as the database sums them; the page shows nano-dollars.
    expect(h.spend("org", "org_1").cost_usd).toBe(0.1 + 0.2)
    expect(h.standing(cap.id)).toMatchObject({ current: 0.3, percent: 100, state: "exceeded" })
  })

  it("counts nothing of a token count that is no whole non-negative number", () => {
    const cap = budget({ scope: "user", scope_id: "alice", action: "block", condition: { window: "daily", metric: "tokens_total", threshold: 10 } })
    const h = foldHarness({ rules: [cap] })
    // What the API refuses can still be in the log (an older producer): the fold counts it as nothing.
    for (const bad of ["500", -3, null, true]) h.signal("alice", { tokens_in: bad, tokens_out: bad })
    h.signal("alice", { tokens_in: 4.9, tokens_out: 5.9 })
    expect(h.userSpend("alice")).toEqual({ cost_usd: 0, tokens_in: 4, tokens_out: 5 })
    expect(h.sessions("alice")[0]).toMatchObject({ tokens_in: 4, tokens_out: 5, signal_count: 5 })
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(true)
    expect(h.signal("alice", {}).ok).toBe(false)
  })

  it("does not count pre-tool signals, but judges them", () => {
    const cap = budget({ scope: "user", scope_id: "alice", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 100 } })
    const h = foldHarness({ rules: [cap] })
    h.signal("alice", { type: "pre-tool", tool_name: "Bash", tokens_in: 500 })
    expect(h.userSpend("alice").tokens_in).toBe(0)
    h.signal("alice", { tokens_in: 100 })
    expect(h.signal("alice", { type: "pre-tool", tool_name: "Bash" })).toMatchObject({ ok: false, rule_id: cap.id })
    expect(h.userSpend("alice").tokens_in).toBe(100)
    expect(h.events("alice").map((e) => [e.type, e.tokens_in])).toEqual([["pre-tool", 0], ["post-tool", 100], ["pre-tool", 0]])
    expect(h.sessions("alice")[0]).toMatchObject({ signal_count: 3, tokens_in: 100 })
  })

  it("disabled, or of another scope, does nothing", () => {
    const off = budget({ enabled: false, action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1 } })
    const otherTeam = budget({ scope: "team", scope_id: "team_z", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1 } })
    const otherUser = budget({ scope: "user", scope_id: "bob", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1 } })
    const h = foldHarness({ rules: [off, otherTeam, otherUser], teams: { alice: ["team_a"] } })
    expect([10, 10].map((t) => h.signal("alice", { tokens_in: t }).ok)).toEqual([true, true])
    expect(h.notices().map((n) => n.type)).toEqual(["session.started"])
    // Only an enabled shared budget watches its scope.
    expect(h.spend("team", "team_a").tokens_in).toBe(20)
  })
})

describe("windows", () => {
  it("a spent daily budget blocks until midnight in the org's time zone, then counts afresh", () => {
    const daily = budget({ action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 100 } })
    // New York is UTC-5 in March before the 8th: its day starts at 05:00 UTC.
    const h = foldHarness({ rules: [daily], org: { time_zone: "America/New_York" }, start: "2026-03-02T20:00:00.000Z" })
    h.signal("alice", { tokens_in: 100 })
    h.advanceTo("2026-03-03T04:59:59.000Z")
    expect(h.signal("alice", { session_id: "late", tokens_in: 1 }).ok).toBe(false)
    expect(h.standing(daily.id)).toMatchObject({
      window_start: "2026-03-02T05:00:00.000Z",
      window_end: "2026-03-03T05:00:00.000Z",
      current: 101,
      state: "exceeded"
    })
    h.advanceTo("2026-03-03T05:00:00.000Z")
    expect(h.signal("alice", { session_id: "late", tokens_in: 1 }).ok).toBe(true)
    expect(h.standing(daily.id)).toMatchObject({ window_start: "2026-03-03T05:00:00.000Z", current: 1, percent: 1, state: "ok" })
    expect(h.spend("org", "org_1", "monthly").tokens_in).toBe(102)
  })

  it("a monthly budget spans the days of its month and starts again on the 1st", () => {
    const monthly = budget({ action: "block", condition: { window: "monthly", metric: "tokens_in", threshold: 100 } })
    const h = foldHarness({ rules: [monthly], start: "2026-03-30T12:00:00.000Z" })
    h.signal("alice", { tokens_in: 60 })
    h.advance("1 day")
    h.signal("alice", { tokens_in: 40 })
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(false)
    expect(h.spend("org", "org_1").tokens_in).toBe(41)
    h.advanceTo("2026-04-01T00:00:00.000Z")
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(true)
    expect(h.standing(monthly.id)).toMatchObject({ window_start: "2026-04-01T00:00:00.000Z", window_end: "2026-05-01T00:00:00.000Z", current: 1 })
    // The exceeded of March does not stand for April: April's levels are its own.
    h.signal("alice", { tokens_in: 99 })
    expect(h.notices("budget.exceeded").map((n) => n.payload.data.current)).toEqual([100, 100])
  })

  it("a user's own counters keep the current and the previous window of each kind", () => {
    const h = foldHarness({ start: "2026-01-31T23:00:00.000Z" })
    h.signal("alice", { tokens_in: 1 })
    h.advance("2 hours")
    h.signal("alice", { tokens_in: 2 })
    h.advance("1 day")
    h.signal("alice", { tokens_in: 3 })
    expect(Object.keys(h.state("alice").usage ?? {}).sort()).toEqual(["live:d:2026-02-01", "live:d:2026-02-02", "live:m:2026-01", "live:m:2026-02"])
    h.advance("40 days")
    h.signal("alice", { tokens_in: 4 })
    expect(h.state("alice").usage).toEqual({
      "live:d:2026-02-02": { cost_usd: 0, tokens_in: 3, tokens_out: 0 },
      "live:d:2026-03-14": { cost_usd: 0, tokens_in: 4, tokens_out: 0 },
      "live:m:2026-02": { cost_usd: 0, tokens_in: 5, tokens_out: 0 },
      "live:m:2026-03": { cost_usd: 0, tokens_in: 4, tokens_out: 0 }
    })
  })
})

describe("per-user limits", () => {
  it("count each user's own usage: the user over the limit is blocked, the others are not", () => {
    const limit = rule({
      type: "user_limit",
      action: "block",
      action_config: { message: "Your daily limit is spent" },
      condition: { window: "daily", metric: "tokens_total", per_user: 1_000 }
    })
    const h = foldHarness({ rules: [limit] })
    h.signal("alice", { tokens_in: 700, tokens_out: 300 })
    h.signal("bob", { tokens_in: 850 })
    expect(h.signal("alice", { tokens_in: 1 })).toMatchObject({ ok: false, rule_id: limit.id, message: "Your daily limit is spent" })
    expect(h.signal("bob", { tokens_in: 100 }).ok).toBe(true)
    expect(h.signal("carol", { tokens_in: 1 }).ok).toBe(true)
    expect(h.notices("budget.exceeded").map((n) => n.payload.data)).toEqual([
      { rule_id: limit.id, rule_name: limit.name, scope: "user", scope_id: "alice", threshold: 1_000, current: 1_000, window: "daily", metric: "tokens_total" }
    ])
    expect(h.notices("budget.warning").map((n) => n.payload.data.scope_id)).toEqual(["alice", "bob"])
    expect(h.standing(limit.id)).toMatchObject({
      type: "user_limit",
      limit: 1_000,
      current: 1_001,
      percent: 100.1,
      state: "exceeded",
      users_exceeded: 1,
      users_warning: 1,
      top_user_id: "alice"
    })
  })

  it("stand at warning from 80% and exceeded from the limit itself; a user with nothing in the metric is no top user", () => {
    const limit = rule({ type: "user_limit", condition: { window: "daily", metric: "cost_usd", per_user: 1 } })
    const tokens = rule({ type: "user_limit", condition: { window: "daily", metric: "tokens_total", per_user: 100 } })
    const h = foldHarness({ rules: [limit, tokens], prices })
    // No price for this model: tokens, but no dollars.
    h.signal("bob", { model: "unpriced-model", tokens_in: 79 })
    expect(h.standing(limit.id)).toMatchObject({ current: 0, state: "ok", top_user_id: null, users_warning: 0, users_exceeded: 0 })
    expect(h.standing(tokens.id)).toMatchObject({ current: 79, percent: 79, state: "ok", top_user_id: "bob" })
    h.signal("bob", { tokens_in: 1 })
    expect(h.standing(tokens.id)).toMatchObject({ current: 80, state: "warning", users_warning: 1 })
    h.signal("alice", { model: "house-model", tokens_in: 1_000 })
    expect(h.standing(limit.id)).toMatchObject({ current: 1, percent: 100, state: "exceeded", top_user_id: "alice", users_exceeded: 1 })
  })

  it("of a team cover its members only; the top user is the highest, ties to the first by id", () => {
    const limit = rule({ type: "user_limit", scope: "team", scope_id: "team_a", condition: { window: "monthly", metric: "cost_usd", per_user: 3 } })
    const h = foldHarness({ rules: [limit], prices, teams: { alice: ["team_a"], bob: ["team_a"], carol: [] } })
    expect(h.standing(limit.id)).toMatchObject({ current: 0, percent: 0, state: "ok", users_exceeded: 0, users_warning: 0, top_user_id: null })
    h.signal("bob", { model: "house-model", tokens_in: 1_000 })
    h.signal("alice", { model: "house-model", tokens_in: 1_000 })
    h.signal("carol", { model: "house-model", tokens_in: 9_000 })
    expect(h.standing(limit.id)).toMatchObject({ current: 1, percent: 33.3, state: "ok", top_user_id: "alice", users_warning: 0 })
    h.signal("bob", { model: "house-model", tokens_out: 400 })
    expect(h.standing(limit.id)).toMatchObject({ current: 2.6, percent: 86.7, state: "warning", top_user_id: "bob", users_warning: 1 })
    // carol is not in the team: her $9 is in no one's limit, and her signals are not judged by it.
    expect(h.signal("carol", { model: "house-model", tokens_in: 1 }).action).toBeUndefined()
  })

  it("reset with the window, per user", () => {
    const limit = rule({ type: "user_limit", action: "block", condition: { window: "daily", metric: "tokens_total", per_user: 10 } })
    const h = foldHarness({ rules: [limit], start: "2026-03-02T23:00:00.000Z" })
    h.signal("alice", { tokens_in: 10 })
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(false)
    h.advance("1 hour")
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(true)
    expect(h.userSpend("alice").tokens_in).toBe(1)
    expect(h.userSpend("alice", "monthly").tokens_in).toBe(12)
  })
})

describe("the org's settings", () => {
  it("a time zone set mid-day moves the day's window from the next signal on; names are taken in any case", () => {
    const daily = budget({ action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 100 } })
    const h = foldHarness({ rules: [daily], start: "2026-03-02T22:00:00.000Z" })
    h.signal("alice", { tokens_in: 100 })
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(false)
    // In Tokyo it is already the 3rd.
    h.setOrg({ time_zone: "asia/TOKYO" })
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(true)
    expect(h.standing(daily.id)).toMatchObject({ window_start: "2026-03-02T15:00:00.000Z", window_end: "2026-03-03T15:00:00.000Z", current: 1 })
    expect(h.log().flat().map((e) => e.record.kind === "signal" ? e.record.time_zone ?? "UTC" : "")).toEqual(["UTC", "UTC", "Asia/Tokyo"])
    // A zone that is a link ICU does not list is a zone all the same.
    h.setOrg({ time_zone: "Asia/Kolkata" })
    expect(h.standing(daily.id)).toMatchObject({ window_start: "2026-03-02T18:30:00.000Z" })
  })

  it("refuses what is no time zone and a timeout out of bounds, naming each problem", () => {
    const h = foldHarness()
    expect(() => h.setOrg({ time_zone: "+01:00" })).toThrow("time_zone: \"+01:00\" is not an IANA time zone name")
    expect(() => h.setOrg({ time_zone: "Mars/Olympus_Mons" })).toThrow("time_zone")
    expect(() => h.setOrg({ session_timeout: 59 })).toThrow("session_timeout: must be between 60 and 86400, got 59")
    expect(() => h.setOrg({ session_timeout: 86_401 })).toThrow("got 86401")
    expect(() => h.setOrg({ time_zone: "nowhere", session_timeout: 1 })).toThrow(/time_zone.*; session_timeout/)
    h.setOrg({ session_timeout: 60 })
    h.setOrg({ session_timeout: 86_400, time_zone: "UTC" })
    h.signal("alice", {})
    expect(h.log().flat().map((e) => e.record.kind === "signal" && e.record.session_timeout_s)).toEqual([86_400])
  })
})

describe("over several nodes", () => {
  it("a team budget crossed on one node blocks the members whose partitions another node owns", () => {
    const team = budget({ scope: "team", scope_id: "team_a", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1_000 } })
    // alice's partition (1) is on node 1; bob's (2) and erin's (0) on node 0.
    const h = foldHarness({ nodes: 2, rules: [team], teams: { alice: ["team_a"], bob: ["team_a"], erin: ["team_a"] } })
    expect(h.signal("alice", { tokens_in: 600 }).ok).toBe(true)
    expect(h.signal("bob", { tokens_in: 400 }).ok).toBe(true)
    expect(h.signal("alice", { tokens_in: 1 })).toMatchObject({ ok: false, rule_id: team.id })
    expect(h.signal("erin", { tokens_in: 1 })).toMatchObject({ ok: false, rule_id: team.id })
    expect(h.notices("budget.exceeded")).toHaveLength(1)
  })

  it("a budget created after the spend sees what the other nodes counted before it watched the scope", () => {
    const h = foldHarness({ nodes: 2, teams: { alice: ["team_a"], bob: ["team_a"] } })
    h.signal("alice", { tokens_in: 700 })
    h.signal("bob", { tokens_in: 300 })
    const team = budget({ scope: "team", scope_id: "team_a", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1_000 } })
    h.setRules([team])
    expect(h.signal("bob", { tokens_in: 1 }).ok).toBe(false)
    expect(h.signal("alice", { tokens_in: 1 }).ok).toBe(false)
  })
})
