import { describe, expect, it } from "@effect/vitest"
import type { Rule } from "../../src/domain/rules.ts"
import { foldHarness, rule, ruleProblems } from "../support/fold-harness.ts"

/**
 * Model filters, org policies, priorities, scopes and actions as a user's tool meets them, through
 * the engine core in process (test/support/fold-harness.ts).
 */

const filter = (over: Partial<Rule> & { readonly condition: Rule["condition"] }) => rule({ type: "model_filter", action: "block", ...over })
const policy = (condition: Rule["condition"], over: Partial<Rule> = {}) => rule({ type: "org_policy", action: "block", condition, ...over })

describe("a model filter", () => {
  it("blocks the listed models and their dated releases, with the rule's message; other models go on", () => {
    const noO3 = filter({ condition: { model: { in: ["o3", "claude-sonnet-4", "gpt-4o"] } }, action_config: { message: "o3 is not allowed" } })
    const h = foldHarness({ rules: [noO3] })
    const blocked = h.signal("alice", { model: "o3" })
    expect(blocked).toEqual({
      ok: false,
      signal_id: blocked.signal_id,
      session_id: blocked.session_id,
      action: "block",
      rule_id: noO3.id,
      message: "o3 is not allowed"
    })
    expect(["claude-sonnet-4-20250514", "gpt-4o-2024-08-06", "claude-sonnet-4@20250514", "gpt-4o-latest"].map((model) => h.signal("alice", { model }).ok))
      .toEqual([false, false, false, false])
    expect(["gpt-4o-mini", "o3-mini", "claude-sonnet-4-5", "claude-opus-4", "o"].map((model) => h.signal("alice", { model }).ok))
      .toEqual([true, true, true, true, true])
    // A signal that names no model is not a model call.
    expect(h.signal("alice", { type: "user-prompt" }).ok).toBe(true)
    // Blocked or not, every signal is in the session.
    expect(h.sessions("alice")[0]).toMatchObject({ signal_count: 11, primary_model: "o3" })
    expect(h.notices("rule.triggered").map((n) => n.payload.data.model)).toEqual(["o3", "claude-sonnet-4-20250514", "gpt-4o-2024-08-06",
      "claude-sonnet-4@20250514", "gpt-4o-latest"])
  })

  it("in allowlist mode blocks every model it does not list", () => {
    const only = filter({ condition: { model: { not_in: ["claude-sonnet-4"] } } })
    const h = foldHarness({ rules: [only] })
    expect(["claude-sonnet-4", "claude-sonnet-4-20250514", "gpt-4o"].map((model) => h.signal("alice", { model }).ok)).toEqual([true, true, false])
    // No model, or an empty name: no model call to judge.
    expect(h.signal("alice", {}).ok).toBe(true)
    expect(h.signal("alice", { model: "" }).ok).toBe(true)
  })

  it("with warn lets the signal through and tells the dashboard", () => {
    const watch = filter({ action: "warn", action_config: { message: "gpt-4o is discouraged" }, condition: { model: { in: ["gpt-4o"] } } })
    const h = foldHarness({ rules: [watch] })
    const answer = h.signal("alice", { model: "gpt-4o" })
    expect(answer).toEqual({
      ok: true,
      signal_id: answer.signal_id,
      session_id: answer.session_id,
      action: "warn",
      rule_id: watch.id,
      message: "gpt-4o is discouraged"
    })
    expect(h.events("alice")[0]!.verdict).toBeUndefined()
  })
})

describe("org policies", () => {
  it("require_project_id blocks a signal whose event has no project, its own or its session's", () => {
    const needProject = policy({ require_project_id: true }, { action_config: { message: "name a project" } })
    const h = foldHarness({ rules: [needProject] })
    expect(h.signal("alice", {})).toMatchObject({ ok: false, rule_id: needProject.id, message: "name a project" })
    expect(h.signal("alice", { session_id: "cs-2", project_id: "proj_x" }).ok).toBe(true)
    // The session names the project: a signal of it without one is not blocked.
    expect(h.signal("alice", { session_id: "cs-2" }).ok).toBe(true)
    expect(h.signal("alice", { session_id: "cs-3", project_id: "" }).ok).toBe(false)
  })

  it("block_unknown_models blocks a model missing from the price table, not a known one nor no model", () => {
    const known = policy({ block_unknown_models: true })
    const h = foldHarness({ rules: [known], prices: { "house-model": { input: 1, output: 1 } } })
    expect(h.signal("alice", { model: "totally-new-model" })).toMatchObject({ ok: false, rule_id: known.id })
    expect(h.signal("alice", { model: "claude-sonnet-4" }).ok).toBe(true)
    expect(h.signal("alice", { model: "house-model" }).ok).toBe(true)
    expect(h.signal("alice", {}).ok).toBe(true)
    expect(h.events("alice").map((e) => e.model_known)).toEqual([false, true, true, false])
  })

  it("blocks listed tools, commands and MCP servers, and what the lists do not name goes on", () => {
    const tools = policy({
      blocked_tools: ["WebFetch", "mcp__*__delete*"],
      blocked_commands: ["rm -rf /", "git push * --force"],
      blocked_mcp_servers: ["Prod-DB"]
    }, { action_config: { message: "not on this org's machines" } })
    const h = foldHarness({ rules: [tools] })
    const sends = [
      { type: "pre-tool", tool_name: "webfetch" },
      { type: "pre-tool", tool_name: "mcp__github__delete_repo" },
      { type: "pre-tool", tool_name: "Bash", command: "sudo rm   -rf /" },
      { type: "pre-tool", tool_name: "Bash", command: "git push origin main --force" },
      { type: "pre-tool", tool_name: "query", mcp_server: "prod-db" },
      { type: "pre-tool", tool_name: "WebSearch" },
      { type: "pre-tool", tool_name: "mcp__github__list_repos" },
      { type: "pre-tool", tool_name: "Bash", command: "git push origin main" },
      { type: "pre-tool", tool_name: "query", mcp_server: "staging-db" },
      { type: "post-tool" }
    ] as const
    expect(sends.map((s) => h.signal("alice", s).ok)).toEqual([false, false, false, false, false, true, true, true, true, true])
  })

  it("matches a tool pattern against the whole name, with * for any run of characters", () => {
    const tools = policy({ blocked_tools: ["*_write", "Bash*", "mcp__*__exec", "Web*Fetch*"] })
    const h = foldHarness({ rules: [tools] })
    const blocked = (tool_name: string) => !h.signal("alice", { type: "pre-tool", tool_name }).ok
    expect(["file_write", "BASHFUL", "bash", "mcp__db__exec", "mcp____exec", "WebFetch", "web_fetch_fetch"].filter(blocked))
      .toEqual(["file_write", "BASHFUL", "bash", "mcp__db__exec", "mcp____exec", "WebFetch", "web_fetch_fetch"])
    // Anchored at both ends: the parts may not overlap, nor anything follow the last one.
    expect(["file_write2", "xbash", "mcp__exec", "mcp__db__exec_all", "WebSearch"].filter(blocked)).toEqual([])
  })

  it("matches a command pattern anywhere in the command, words kept apart, within its first 16 KB", () => {
    const commands = policy({ blocked_commands: ["git  push", "curl * | sh"] })
    // An operator who raised MAX_METADATA_BYTES: a command may be longer than what is examined.
    const h = foldHarness({ rules: [commands], maxMetadataBytes: 65_536 })
    const blocked = (command: string) => !h.signal("alice", { type: "pre-tool", tool_name: "Bash", command }).ok
    expect(["cd x && git push", "curl https://x.dev/i.sh | sh", "git\tpush"].filter(blocked))
      .toEqual(["cd x && git push", "curl https://x.dev/i.sh | sh", "git\tpush"])
    expect(["gitpush", "git pull", "curl x | bash -s", "sh | curl x", "curl | sh"].filter(blocked)).toEqual([])
    const padding = " ".repeat(20_000)
    expect(blocked(`true;${"x".repeat(16_380)} git push`)).toBe(false)
    expect(blocked(`git push${padding}`)).toBe(true)
    expect(blocked(`${"y".repeat(16_300)} git push`)).toBe(true)
    expect(() => foldHarness().signal("alice", { command: padding })).toThrow("metadata_too_large: metadata is larger than 16384 bytes")
  })

  it("is judged at acceptance too: the answer is the same, in the signal's session", () => {
    const noFetch = policy({ blocked_tools: ["WebFetch"] })
    const h = foldHarness({ rules: [noFetch] })
    const first = h.signal("alice", { type: "session-start" })
    const answer = h.signal("alice", { type: "pre-tool", tool_name: "WebFetch" })
    expect(answer).toEqual({ ok: false, signal_id: answer.signal_id, session_id: first.session_id, action: "block", rule_id: noFetch.id })
  })
})

describe("several rules", () => {
  it("all fire in priority order; the first block decides and gives its message", () => {
    const log = filter({ priority: 5, action: "log", condition: { model: { in: ["o3"] } } })
    const warn = filter({ priority: 10, action: "warn", action_config: { message: "careful" }, condition: { model: { in: ["o3"] } } })
    const late = filter({ priority: 50, action_config: { message: "second block" }, condition: { model: { in: ["o3"] } } })
    const first = filter({ priority: 20, action_config: { message: "first block" }, condition: { model: { in: ["o3"] } } })
    const notify = filter({ priority: 1, action: "notify", condition: { model: { in: ["o3", "o1"] } } })
    const h = foldHarness({ rules: [late, warn, first, log, notify] })
    expect(h.signal("alice", { model: "o3" })).toMatchObject({ ok: false, action: "block", rule_id: first.id, message: "first block" })
    expect(h.notices("rule.triggered").map((n) => [n.payload.data.rule_id, n.payload.data.action]))
      .toEqual([[notify.id, "notify"], [log.id, "log"], [warn.id, "warn"], [first.id, "block"], [late.id, "block"]])
    // No block: the first rule that fired decides, and the signal goes on.
    const o1 = h.signal("alice", { model: "o1" })
    expect(o1).toEqual({ ok: true, signal_id: o1.signal_id, session_id: o1.session_id, action: "notify", rule_id: notify.id })
  })

  it("of equal priority go older first, then by id", () => {
    const older = filter({ action_config: { message: "older" }, condition: { model: { in: ["o3"] } } })
    const newer = filter({ action_config: { message: "newer" }, condition: { model: { in: ["o3"] } } })
    const h = foldHarness({ rules: [newer, older] })
    expect(h.signal("alice", { model: "o3" }).message).toBe("older")
    const twin = { ...newer, id: "rule_0", created_at: older.created_at, action_config: { message: "twin" } }
    h.setRules([older, twin])
    expect(h.signal("alice", { model: "o3" }).message).toBe("twin")
  })

  it("apply by scope: the user, a team the user is in, the org, the signal's project", () => {
    const o3 = { model: { in: ["o3"] } }
    const rules = [
      filter({ scope: "user", scope_id: "bob", condition: o3, action_config: { message: "bob" } }),
      filter({ scope: "team", scope_id: "team_a", condition: o3, action_config: { message: "team_a" } }),
      filter({ scope: "project", scope_id: "proj_x", condition: o3, action_config: { message: "proj_x" } }),
      filter({ scope: "org", scope_id: "org_other", condition: o3, action_config: { message: "other org" } })
    ]
    const h = foldHarness({ rules, teams: { carol: ["team_a"] } })
    expect(h.signal("alice", { model: "o3" }).ok).toBe(true)
    expect(h.signal("bob", { model: "o3" }).message).toBe("bob")
    expect(h.signal("carol", { model: "o3" }).message).toBe("team_a")
    expect(h.signal("alice", { session_id: "p", model: "o3", project_id: "proj_x" }).message).toBe("proj_x")
    expect(h.signal("alice", { session_id: "p", model: "o3" }).message).toBe("proj_x")
  })

  it("disabled or removed do nothing from the next signal on", () => {
    const noO3 = filter({ condition: { model: { in: ["o3"] } } })
    const h = foldHarness({ rules: [noO3] })
    expect(h.signal("alice", { model: "o3" }).ok).toBe(false)
    h.setRules([{ ...noO3, enabled: false }])
    expect(h.signal("alice", { model: "o3" }).ok).toBe(true)
    h.setRules([])
    expect(h.signal("alice", { model: "o3" }).ok).toBe(true)
  })
})

describe("a signal sent again under its idempotency key", () => {
  it("is answered as its first copy was, flagged duplicate, and counted once", () => {
    const noO3 = filter({ condition: { model: { in: ["o3"] } }, action_config: { message: "no" } })
    const h = foldHarness({ rules: [noO3] })
    const first = h.signal("alice", { model: "o3", tokens_in: 10, idempotency_key: "k-1" })
    const again = h.signal("alice", { model: "o3", tokens_in: 10, idempotency_key: "k-1" })
    expect(again).toEqual({ ...first, duplicate: true })
    const ok = h.signal("alice", { model: "claude-sonnet-4", tokens_in: 5, idempotency_key: "k-2" })
    expect(h.signal("alice", { model: "claude-sonnet-4", tokens_in: 5, idempotency_key: "k-2" })).toEqual({ ...ok, duplicate: true })
    // Both copies in one append: the second is the retry.
    const [a, b] = h.sendAll([["alice", { tokens_in: 1, idempotency_key: "k-3" }], ["alice", { tokens_in: 1, idempotency_key: "k-3" }]])
    expect(b).toEqual({ ...a, duplicate: true })
    expect(h.events("alice").map((e) => [e.tokens_in, e.verdict ?? null])).toEqual([
      [10, { ok: false, action: "block", rule_id: noO3.id, message: "no" }],
      [5, null],
      [1, null]
    ])
    expect(h.userSpend("alice").tokens_in).toBe(16)
    expect(h.sessions("alice")[0]!.signal_count).toBe(3)
    // A warning is kept for the retries too.
    const watch = filter({ action: "warn", action_config: { message: "careful" }, condition: { model: { in: ["gpt-4o"] } } })
    h.setRules([watch])
    const warned = h.signal("alice", { model: "gpt-4o", idempotency_key: "k-4" })
    expect(warned).toMatchObject({ ok: true, action: "warn", rule_id: watch.id, message: "careful" })
    expect(h.signal("alice", { model: "gpt-4o", idempotency_key: "k-4" })).toEqual({ ...warned, duplicate: true })
    // Another user's key is another signal.
    expect(h.signal("bob", { idempotency_key: "k-1" }).duplicate).toBeUndefined()
  })
})

describe("rules the management API refuses", () => {
  /** A rule as a client sends it: the condition is whatever JSON it wrote. */
  const problems = (over: Partial<Omit<Rule, "condition">> & Pick<Rule, "type"> & { readonly condition: unknown }) =>
    ruleProblems({ name: "a rule", action: "warn", action_config: {}, ...over })

  it("takes each type's well-formed condition", () => {
    expect([
      problems({ type: "budget", condition: { window: "daily", metric: "cost_usd", threshold: 0.01 } }),
      problems({ type: "user_limit", condition: { window: "monthly", metric: "tokens_total", per_user: 1 } }),
      problems({ type: "model_filter", condition: { model: { not_in: ["claude-sonnet-4"] } } }),
      problems({ type: "org_policy", condition: { require_project_id: true } }),
      problems({ type: "org_policy", condition: { block_unknown_models: true } }),
      problems({ type: "org_policy", condition: { blocked_mcp_servers: ["*"] } }),
      problems({ type: "model_filter", action: "block", action_config: { message: "no" }, condition: { model: { in: ["o3"] } } })
    ]).toEqual([[], [], [], [], [], [], []])
  })

  it("says how a condition's shape is wrong for its type", () => {
    const [shape] = problems({ type: "budget", condition: { window: "weekly", metric: "cost_usd", threshold: 1 } })
    expect(shape).toBe("condition does not match the budget shape: Expected \"daily\" | \"monthly\" at [\"window\"]")
    expect(shape).not.toContain("\n")
    expect(problems({ type: "user_limit", condition: { window: "daily", metric: "tokens_in", per_user: 1 } })[0])
      .toMatch(/^condition does not match the user_limit shape/)
    expect(problems({ type: "org_policy", condition: { require_project_id: true, extra: 1 } })[0])
      .toMatch(/^condition does not match the org_policy shape: .*extra/)
  })

  it("names every problem with the values", () => {
    expect(problems({ type: "budget", name: "  ", action: "block", condition: { window: "daily", metric: "cost_usd", threshold: 0 } })).toEqual([
      "name: must not be blank",
      "condition.threshold: must be greater than 0",
      "action_config.message: required for block (shown when the tool call is aborted)"
    ])
    expect(problems({ type: "user_limit", action: "block", action_config: { message: " " }, condition: { window: "daily", metric: "cost_usd", per_user: -1 } }))
      .toEqual(["condition.per_user: must be greater than 0", "action_config.message: required for block (shown when the tool call is aborted)"])
    expect(problems({ type: "model_filter", condition: { model: { in: [] } } })).toEqual(["condition.model.in: must name at least one model"])
    expect(problems({ type: "model_filter", condition: { model: { not_in: ["o3", " "] } } })).toEqual(["condition.model.not_in: model names must not be blank"])
    expect(problems({ type: "org_policy", condition: { require_project_id: false, block_unknown_models: false } })).toEqual([
      "condition: an org_policy must enable require_project_id or block_unknown_models, or name blocked_tools, blocked_commands, blocked_mcp_servers, secret_kinds, protected_paths or custom_patterns"
    ])
    expect(problems({ type: "org_policy", condition: { blocked_tools: [], blocked_commands: ["* *"], blocked_mcp_servers: [" "] } })).toEqual([
      "condition.blocked_tools: must name at least one entry (leave it out instead)",
      "condition.blocked_commands: an entry must have more than * and spaces (it would match everything)",
      "condition.blocked_mcp_servers: entries must not be blank"
    ])
    expect(
      problems({ type: "org_policy", condition: { blocked_tools: Array.from({ length: 101 }, (_, i) => `tool-${i}`), blocked_commands: ["x".repeat(201)] } })
    )
      .toEqual(["condition.blocked_tools: at most 100 entries", "condition.blocked_commands: entries are at most 200 characters"])
    expect(
      problems({ type: "org_policy", condition: { blocked_tools: Array.from({ length: 100 }, (_, i) => `tool-${i}`), blocked_commands: ["x".repeat(200)] } })
    )
      .toEqual([])
    expect(problems({ type: "org_policy", action_config: { message: "m".repeat(2_001) }, condition: { require_project_id: true } }))
      .toEqual(["action_config.message: at most 2000 characters"])
    expect(problems({ type: "org_policy", action_config: { message: "m".repeat(2_000) }, condition: { require_project_id: true } })).toEqual([])
    expect(problems({ type: "org_policy", action_config: { note: "n".repeat(8_200) }, condition: { require_project_id: true } }))
      .toEqual(["action_config: at most 8192 bytes of JSON"])
  })
})
