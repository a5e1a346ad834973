import { describe, expect, it } from "vitest"
import { decodeCondition, type Rule, semanticProblems } from "../../src/domain/rules.ts"

// What POST /api/v1/rules answers (422, one line per problem) for rules that are well-shaped JSON
// but say something the engine cannot act on, at the edges of each bound.

type Draft = {
  readonly type: Rule["type"]
  readonly condition: Record<string, unknown>
  readonly action?: Rule["action"]
  readonly action_config?: Record<string, unknown>
}
const problemsOf = ({ type, condition, action = "log", action_config = {} }: Draft) => {
  const decoded = decodeCondition(type, condition)
  if ("error" in decoded) return [decoded.error]
  return semanticProblems({ type, condition: decoded.ok, action, action_config, name: "rule" })
}
const patterns = (n: number, kind = (i: number) => `k${i}`) => Array.from({ length: n }, (_, i) => ({ kind: kind(i), pattern: `k${i}_[0-9]{8}` }))
// An action_config of exactly `bytes` bytes of JSON.
const configOf = (bytes: number) => ({ note: "x".repeat(bytes - JSON.stringify({ note: "" }).length) })

describe("a rule's problems at its bounds", () => {
  const cases: ReadonlyArray<readonly [string, Draft, ReadonlyArray<string>]> = [
    ["a user limit of 1 a user", { type: "user_limit", condition: { window: "daily", metric: "cost_usd", per_user: 1 } }, []],
    ["a user limit of 0", { type: "user_limit", condition: { window: "monthly", metric: "tokens_total", per_user: 0 } }, [
      "condition.per_user: must be greater than 0"
    ]],
    ["a blank blocked tool: blank, not match-everything", { type: "org_policy", condition: { blocked_tools: ["Bash", " "] } }, [
      "condition.blocked_tools: entries must not be blank"
    ]],
    ["a blocked tool of stars", { type: "org_policy", condition: { blocked_tools: ["mcp__*", "* *"] } }, [
      "condition.blocked_tools: an entry must have more than * and spaces (it would match everything)"
    ]],
    ["a blocked command of stars", { type: "org_policy", condition: { blocked_commands: ["**"] } }, [
      "condition.blocked_commands: an entry must have more than * and spaces (it would match everything)"
    ]],
    ["a blocked MCP server of stars: taken as a name", { type: "org_policy", condition: { blocked_mcp_servers: ["*"] } }, []],
    ["an action_config of 8192 bytes", { type: "org_policy", condition: { require_project_id: true }, action_config: configOf(8192) }, []],
    ["an action_config of 8193 bytes", { type: "org_policy", condition: { require_project_id: true }, action_config: configOf(8193) }, [
      "action_config: at most 8192 bytes of JSON"
    ]],
    ["redacting an org's own patterns' findings", { type: "org_policy", condition: { custom_patterns: patterns(1) }, action: "redact" }, []],
    ["redacting with no content list", { type: "org_policy", condition: { require_project_id: true }, action: "redact" }, [
      "action: redact is for an org_policy naming secret_kinds or custom_patterns (it takes the secrets found out)"
    ]],
    ["a blank secret kind: blank, not a bad kind", { type: "org_policy", condition: { secret_kinds: ["aws_access_token", " "] } }, [
      "condition.secret_kinds: entries must not be blank"
    ]],
    ["a long bad secret kind: quoted, cut to 100 characters", { type: "org_policy", condition: { secret_kinds: [`A${"b".repeat(150)}`] } }, [
      `condition.secret_kinds: "A${"b".repeat(99)}" is not a finding kind (lowercase letters, digits and _, or *)`
    ]],
    ["20 custom patterns", { type: "org_policy", condition: { custom_patterns: patterns(20) } }, []],
    ["21 custom patterns, the 21st not judged", { type: "org_policy", condition: { custom_patterns: patterns(21, (i) => (i === 20 ? "BAD" : `k${i}`)) } }, [
      "condition.custom_patterns: at most 20 patterns"
    ]],
    ["no custom patterns", { type: "org_policy", condition: { custom_patterns: [] } }, [
      "condition.custom_patterns: must name at least one pattern (leave it out instead)"
    ]],
    ["a custom pattern of kind *", { type: "org_policy", condition: { custom_patterns: [{ kind: "*", pattern: "acme_[0-9]{8}" }] } }, [
      "condition.custom_patterns[0].kind: lowercase letters, digits and _"
    ]],
    ["a custom pattern of 200 characters", {
      type: "org_policy",
      condition: { custom_patterns: [{ kind: "k", pattern: `k${"[0-9]".repeat(39)}x${"y".repeat(3)}` }] }
    }, []],
    ["protected paths: blank and long ones left to their own problems, the first bad glob named", {
      type: "org_policy",
      condition: { protected_paths: [" ", "a".repeat(201), "~/.ssh/*", "**", "/"] }
    }, [
      "condition.protected_paths: entries must not be blank",
      "condition.protected_paths: entries are at most 200 characters",
      "condition.protected_paths: \"**\": it would match every file"
    ]],
    ["a protected path of 200 characters", { type: "org_policy", condition: { protected_paths: [`~/${"a".repeat(198)}`] } }, []]
  ]
  it.each(cases)("%s", (_, draft, expected) => {
    expect([...problemsOf(draft)].sort()).toEqual([...expected].sort())
  })
})
