import { describe, expect, it } from "@effect/vitest"
import {
  addUsage,
  evaluate,
  evaluationOrder,
  type Metric,
  noUsage,
  type SignalFacts,
  statelessBlock,
  type Usage,
  windowKey
} from "../../src/domain/rule-evaluation.ts"
import type { Rule } from "../../src/domain/rules.ts"

let n = 0
const rule = (over: Partial<Rule>): Rule => {
  n++
  return {
    id: `rule_${String(n).padStart(4, "0")}`,
    name: `r${n}`,
    type: "model_filter",
    enabled: true,
    scope: "org",
    scope_id: "org_1",
    priority: 100,
    condition: { model: { in: ["o3"] } },
    action: "block",
    action_config: { message: `blocked by r${n}` },
    created_at: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}.000Z`,
    updated_at: "2026-01-01T00:00:00.000Z",
    ...over
  }
}

const facts = (over: Partial<SignalFacts> = {}): SignalFacts => ({
  orgId: "org_1",
  userId: "user_1",
  teamIds: ["team_1"],
  projectId: "proj_1",
  model: "o3",
  modelKnown: true,
  ts: "2026-11-22T10:00:00.000Z",
  usage: { cost_usd: 1, tokens_in: 100, tokens_out: 10 },
  ...over
})

const none = () => noUsage

describe("scopes", () => {
  it.each(
    [
      ["user", "user_1", true],
      ["user", "user_2", false],
      ["team", "team_1", true],
      ["team", "team_2", false],
      ["org", "org_1", true],
      ["org", "org_2", false],
      ["project", "proj_1", true],
      ["project", "proj_2", false]
    ] as const
  )("a %s rule for %s applies: %s", (scope, scope_id, applies) => {
    const r = evaluate([rule({ scope, scope_id })], facts(), none)
    expect(r.ok).toBe(!applies)
    expect(r.firings.length).toBe(applies ? 1 : 0)
  })
  it("a project rule does not apply to a signal without a project", () => {
    expect(evaluate([rule({ scope: "project", scope_id: "proj_1" })], facts({ projectId: null }), none).ok).toBe(true)
  })
})

describe("actions", () => {
  it.each(["block", "warn", "log", "notify"] as const)("%s fires; only block makes ok false", (action) => {
    const r = evaluate([rule({ action })], facts(), none)
    expect(r.firings.map((f) => f.action)).toEqual([action])
    expect(r.ok).toBe(action !== "block")
    expect(r.decisive?.action).toBe(action)
  })
  it("every matching rule fires, in priority order; the first block decides and gives the message", () => {
    const warn = rule({ action: "warn", priority: 1 })
    const log = rule({ action: "log", priority: 5 })
    const laterBlock = rule({ priority: 20, action_config: { message: "second" } })
    const firstBlock = rule({ priority: 10, action_config: { message: "first" } })
    const ordered = evaluationOrder([laterBlock, log, firstBlock, warn])
    const r = evaluate(ordered, facts(), none)
    expect(r.firings.map((f) => f.rule.id)).toEqual([warn.id, log.id, firstBlock.id, laterBlock.id])
    expect(r.decisive?.rule.id).toBe(firstBlock.id)
    expect(r.decisive?.rule.action_config.message).toBe("first")
  })
  it("ties in priority go to the older rule", () => {
    const older = rule({ created_at: "2026-01-01T00:00:00.000Z" })
    const newer = rule({ created_at: "2026-06-01T00:00:00.000Z" })
    expect(evaluationOrder([newer, older]).map((r) => r.id)).toEqual([older.id, newer.id])
  })
  it("disabled rules do nothing", () => {
    expect(evaluate([rule({ enabled: false })], facts(), none).firings).toEqual([])
  })
})

describe("model_filter and org_policy", () => {
  it.each([
    [{ model: { in: ["o3"] } }, "o3", true],
    [{ model: { in: ["o3"] } }, "gpt-4o", false],
    [{ model: { not_in: ["claude-sonnet-4"] } }, "o3", true],
    [{ model: { not_in: ["claude-sonnet-4"] } }, "claude-sonnet-4", false],
    [{ model: { in: ["o3"] } }, null, false],
    [{ model: { not_in: ["claude-sonnet-4"] } }, null, false]
  ])("%j with model %s matches: %s", (condition, model, matches) => {
    expect(evaluate([rule({ condition })], facts({ model }), none).ok).toBe(!matches)
  })
  it.each([
    ["claude-sonnet-4", "claude-sonnet-4-20250514", true],
    ["claude-3-5-sonnet", "claude-3-5-sonnet@20240620", true],
    ["claude-3-5-sonnet", "claude-3-5-sonnet-latest", true],
    ["gpt-4o", "gpt-4o-2024-08-06", true],
    ["gpt-4", "gpt-4-0613", true],
    ["gpt-4", "gpt-4-1106-preview", true],
    ["claude-3-5-sonnet", "claude-3-5-sonnet-20240620-v1:0", true],
    ["gpt-4o", "gpt-4o-mini", false],
    ["gpt-4o", "gpt-4o-mini-2024-07-18", false],
    ["claude-3", "claude-3-5-sonnet-20240620", false],
    ["llama-3.1", "llama-3.1-405b", false],
    ["o3", "o3-pro", false],
    ["gpt-4", "gpt-40", false],
    ["claude-sonnet-4-20250514", "claude-sonnet-4", false],
    ["claude-sonnet-4-20250514", "claude-sonnet-4-20250929", false]
  ])("a list naming %s names %s: %s (releases of a listed model, not its variants)", (listed, model, named) => {
    // Both modes: a blocklist blocks what it names, an allowlist blocks what it does not.
    expect(evaluate([rule({ condition: { model: { in: [listed] } } })], facts({ model }), none).ok).toBe(!named)
    expect(evaluate([rule({ condition: { model: { not_in: [listed] } } })], facts({ model }), none).ok).toBe(named)
  })
  it("require_project_id matches signals without a project", () => {
    const r = rule({ type: "org_policy", condition: { require_project_id: true } })
    expect(evaluate([r], facts({ projectId: null }), none).ok).toBe(false)
    expect(evaluate([r], facts(), none).ok).toBe(true)
  })
  it("block_unknown_models matches models missing from the price table", () => {
    const r = rule({ type: "org_policy", condition: { block_unknown_models: true } })
    expect(evaluate([r], facts({ model: "mystery-1", modelKnown: false }), none).ok).toBe(false)
    expect(evaluate([r], facts({ model: "o3", modelKnown: true }), none).ok).toBe(true)
    expect(evaluate([r], facts({ model: null, modelKnown: false }), none).ok).toBe(true)
  })
})

describe("budgets and user limits", () => {
  const budget = (threshold: number, metric: Metric = "cost_usd") =>
    rule({ type: "budget", condition: { window: "daily", metric, threshold }, action: "block" })

  /** Runs signals through one rule, carrying the counter as the engine does. */
  const run = (r: Rule, signals: ReadonlyArray<Usage>) => {
    let used = noUsage
    return signals.map((usage) => {
      const out = evaluate([r], facts({ usage }), () => used)
      used = addUsage(used, usage)
      return out
    })
  }

  it("warns once at 80%, exceeds once at 100%, then blocks every further signal", () => {
    const step = { cost_usd: 3, tokens_in: 0, tokens_out: 0 }
    const results = run(budget(10), [step, step, step, step, step, step])
    // 3, 6, 9 (≥ 80% of 10), 12 (≥ 100%): the 5th signal is the first with the budget spent before it.
    expect(results.map((r) => r.crossings.map((c) => c.level))).toEqual([[], [], ["warning"], ["exceeded"], [], []])
    expect(results.map((r) => r.ok)).toEqual([true, true, true, true, false, false])
    expect(results[3]!.crossings[0]).toMatchObject({ threshold: 10, current: 12, scopeId: "org_1", window: "2026-11-22" })
  })
  it("a signal landing exactly on 80% and then on 100% crosses each once", () => {
    const results = run(budget(10), [{ cost_usd: 8, tokens_in: 0, tokens_out: 0 }, { cost_usd: 2, tokens_in: 0, tokens_out: 0 }])
    expect(results.map((r) => r.crossings.map((c) => c.level))).toEqual([["warning"], ["exceeded"]])
  })
  it.each(
    [
      ["tokens_in", 100, [true, false]],
      ["tokens_in", 150, [true, true]],
      ["tokens_out", 10, [true, false]],
      ["tokens_total", 110, [true, false]],
      ["tokens_total", 500, [true, true]]
    ] as const
  )("metric %s with threshold %s", (metric, threshold, oks) => {
    const signal = { cost_usd: 0, tokens_in: 100, tokens_out: 10 }
    expect(run(budget(threshold, metric), [signal, signal]).map((r) => r.ok)).toEqual(oks)
  })
  it("user limits count the user's own usage and report the user as scope", () => {
    const r = rule({ type: "user_limit", condition: { window: "monthly", metric: "tokens_total", per_user: 100 }, action: "warn" })
    const out = evaluate([r], facts({ usage: { cost_usd: 0, tokens_in: 90, tokens_out: 20 } }), () => noUsage)
    expect(out.crossings.map((c) => [c.level, c.scopeId, c.window])).toEqual([
      ["warning", "user_1", "2026-11"],
      ["exceeded", "user_1", "2026-11"]
    ])
  })
  it("windows are calendar days and months in UTC", () => {
    expect(windowKey("daily", "2026-11-22T23:59:59.999Z")).toBe("2026-11-22")
    expect(windowKey("daily", "2026-11-23T00:00:00.000Z")).toBe("2026-11-23")
    expect(windowKey("monthly", "2026-11-30T23:59:59.999Z")).toBe("2026-11")
    expect(windowKey("monthly", "2026-12-01T00:00:00.000Z")).toBe("2026-12")
  })
})

describe("windows in the org's time zone", () => {
  it("a day and a month start at local midnight", () => {
    // 23:30 UTC is already the next day in Berlin (UTC+1 in November), and still the same in New York.
    expect(windowKey("daily", "2026-11-22T23:30:00.000Z", "Europe/Berlin")).toBe("2026-11-23")
    expect(windowKey("daily", "2026-11-22T23:30:00.000Z", "America/New_York")).toBe("2026-11-22")
    expect(windowKey("daily", "2026-11-23T04:59:59.999Z", "America/New_York")).toBe("2026-11-22")
    expect(windowKey("daily", "2026-11-23T05:00:00.000Z", "America/New_York")).toBe("2026-11-23")
    expect(windowKey("monthly", "2026-11-30T23:30:00.000Z", "Asia/Tokyo")).toBe("2026-12")
    expect(windowKey("monthly", "2026-11-30T23:30:00.000Z", "UTC")).toBe("2026-11")
  })
  it("a budget's counter is the one of the signal's local window", () => {
    const r = rule({ type: "budget", condition: { window: "daily", metric: "cost_usd", threshold: 1 }, action: "block" })
    const seen: Array<string> = []
    evaluate([r], facts({ ts: "2026-11-22T23:30:00.000Z", timeZone: "Europe/Berlin" }), (_rule, key) => {
      seen.push(key)
      return noUsage
    })
    expect(seen).toEqual(["2026-11-23"])
  })
})

describe("levels reached", () => {
  it("reports every level at or above the counter, crossed now or before; crossings only when crossed now", () => {
    const r = rule({ type: "budget", condition: { window: "daily", metric: "cost_usd", threshold: 10 }, action: "warn" })
    const at = (before: number, add: number) =>
      evaluate([r], facts({ usage: { cost_usd: add, tokens_in: 0, tokens_out: 0 } }), () => ({ cost_usd: before, tokens_in: 0, tokens_out: 0 }))
    expect(at(0, 1).reached).toEqual([])
    expect(at(7, 1).reached.map((c) => c.level)).toEqual(["warning"])
    expect(at(9, 1).reached.map((c) => c.level)).toEqual(["warning", "exceeded"])
    expect(at(9, 1).crossings.map((c) => c.level)).toEqual(["exceeded"])
    expect(at(12, 1).crossings).toEqual([])
    expect(at(12, 1).reached.map((c) => [c.level, c.current])).toEqual([["warning", 13], ["exceeded", 13]])
  })
})

describe("org_policy lists of tools, commands and MCP servers", () => {
  const policy = (condition: Record<string, unknown>) => rule({ type: "org_policy", condition: condition as Rule["condition"] })
  const blocks = (condition: Record<string, unknown>, over: Partial<SignalFacts>) => !evaluate([policy(condition)], facts(over), none).ok

  it("blocked_commands: anywhere in the command, * any run, whitespace runs equal, case kept", () => {
    const c = { blocked_commands: ["rm -rf", "curl * | sh"] }
    expect(blocks(c, { command: "sudo rm  -rf /tmp/x" })).toBe(true)
    expect(blocks(c, { command: "rm\t-rf build" })).toBe(true)
    expect(blocks(c, { command: "curl -s x.sh | sh" })).toBe(true)
    expect(blocks(c, { command: "curl -s x.sh | bash -c 'y | sh'" })).toBe(true)
    expect(blocks(c, { command: "RM -RF /" })).toBe(false)
    expect(blocks(c, { command: "rm -r build" })).toBe(false)
    expect(blocks(c, { command: "sh | curl x" })).toBe(false)
    // Regular-expression characters are plain text.
    expect(blocks({ blocked_commands: ["a.b(c)+"] }, { command: "x a.b(c)+ y" })).toBe(true)
    expect(blocks({ blocked_commands: ["a.b"] }, { command: "axb" })).toBe(false)
  })

  it("blocked_tools: the whole name, case-insensitively, * a wildcard; blocked_mcp_servers: the name", () => {
    const c = { blocked_tools: ["mcp__*", "WebFetch", "*_delete"] }
    expect(blocks(c, { toolName: "mcp__github__create_issue" })).toBe(true)
    expect(blocks(c, { toolName: "webfetch" })).toBe(true)
    expect(blocks(c, { toolName: "repo_delete" })).toBe(true)
    expect(blocks(c, { toolName: "WebFetchMore" })).toBe(false)
    expect(blocks(c, { toolName: "my_mcp__x" })).toBe(false)
    expect(blocks(c, { toolName: "delete_repo" })).toBe(false)
    expect(blocks({ blocked_mcp_servers: ["GitHub"] }, { mcpServer: "github" })).toBe(true)
    expect(blocks({ blocked_mcp_servers: ["GitHub"] }, { mcpServer: "github-enterprise" })).toBe(false)
  })

  it("a signal without the field is not matched by its list", () => {
    expect(blocks({ blocked_tools: ["Bash"], blocked_commands: ["rm"], blocked_mcp_servers: ["x"] }, {})).toBe(false)
  })

  it("a pathological pattern against a long command stays fast (no backtracking)", () => {
    const pattern = Array.from({ length: 40 }, () => "a").join("*") + "b"
    const command = "a".repeat(100_000)
    // Matching is linear (the command examined up to 16,384 characters): a backtracking regex would not end before the test's timeout.
    expect(blocks({ blocked_commands: Array.from({ length: 100 }, () => pattern) }, { command })).toBe(false)
  })
})

describe("judged at acceptance", () => {
  it("the first stateless block, from the signal alone; budgets and non-blocks are left to the actor", () => {
    const warn = rule({ type: "org_policy", condition: { blocked_tools: ["Bash"] } as Rule["condition"], action: "warn" })
    const budget = rule({ type: "budget", condition: { window: "daily", metric: "tokens_in", threshold: 1 } })
    const tools = rule({ type: "org_policy", condition: { blocked_tools: ["Bash"] } as Rule["condition"] })
    const needsProject = rule({ type: "org_policy", condition: { require_project_id: true } })
    const filter = rule({ condition: { model: { in: ["o3"] } } })
    expect(statelessBlock([warn, budget, tools], facts({ toolName: "bash" }))?.id).toBe(tools.id)
    expect(statelessBlock([warn, budget], facts({ toolName: "bash" }))).toBeUndefined()
    expect(statelessBlock([filter], facts({ model: "o3-2025-04-16" }))?.id).toBe(filter.id)
    // Its session may name the project: not judged without the actor.
    expect(statelessBlock([needsProject], facts({ projectId: null, model: null }))).toBeUndefined()
  })
})
