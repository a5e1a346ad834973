import { describe, expect, it } from "@effect/vitest"
import { decide } from "../../adapters/src/hook.js"
import { redactAsBlock, rewriteReply } from "../../adapters/src/secrets/rewrite.js"
import type { Settings } from "../../adapters/src/settings.js"
import { evaluate, noUsage, type SignalFacts, statelessBlock } from "../../src/domain/rule-evaluation.ts"
import { type Rule, semanticProblems } from "../../src/domain/rules.ts"

const policy = (id: string, condition: Record<string, unknown>, action: Rule["action"]): Rule => ({
  id,
  name: id,
  type: "org_policy",
  enabled: true,
  scope: "org",
  scope_id: "org_1",
  priority: 100,
  condition: condition as Rule["condition"],
  action,
  action_config: { message: `${id} says no` },
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z"
})

const facts = (over: Partial<SignalFacts> = {}): SignalFacts => ({
  orgId: "org_1",
  userId: "user_1",
  teamIds: [],
  projectId: null,
  model: null,
  modelKnown: false,
  ts: "2026-11-22T10:00:00.000Z",
  usage: noUsage,
  ...over
})

const aws = facts({ findingKinds: ["aws_access_token"], toolName: "Bash" })
const redact = policy("rule_redact", { secret_kinds: ["*"] }, "redact")
const block = policy("rule_block", { blocked_tools: ["Bash"] }, "block")
const warn = policy("rule_warn", { secret_kinds: ["*"] }, "warn")

describe("the redact action in the service", () => {
  it("answers ok: false with the redact rule, unless a block also fired (a block wins)", () => {
    const e = evaluate([warn, redact], aws, () => noUsage)
    expect([e.ok, e.decisive?.rule.id, e.decisive?.action]).toEqual([false, "rule_redact", "redact"])
    const both = evaluate([redact, block], aws, () => noUsage)
    expect([both.ok, both.decisive?.rule.id]).toEqual([false, "rule_block"])
    expect(evaluate([redact], facts({ toolName: "Bash" }), () => noUsage).ok).toBe(true)
  })

  it("is judged at acceptance like a block, a block first", () => {
    expect(statelessBlock([redact], aws)?.id).toBe("rule_redact")
    expect(statelessBlock([redact, block], aws)?.id).toBe("rule_block")
    expect(statelessBlock([warn], aws)).toBeUndefined()
  })

  it("is refused on a rule that can find nothing to take out", () => {
    const problems = (type: Rule["type"], condition: Record<string, unknown>) =>
      semanticProblems({ type, condition: condition as Rule["condition"], action: "redact", action_config: {}, name: "x" })
    const refusal = "action: redact is for an org_policy naming secret_kinds or custom_patterns (it takes the secrets found out)"
    expect(problems("org_policy", { blocked_tools: ["Bash"] })).toContain(refusal)
    expect(problems("model_filter", { model: { in: ["o3"] } })).toContain(refusal)
    expect(problems("org_policy", { secret_kinds: ["*"] })).toEqual([])
    expect(problems("org_policy", { custom_patterns: [{ kind: "acme_token", pattern: "acme_[a-z0-9]{24}" }] })).toEqual([])
  })
})

describe("the redact action in the adapter", () => {
  const settings: Settings = {
    url: "https://signals.example.com",
    license_key: "lic_00000000000000000000",
    fail_mode: "open",
    send_prompts: false,
    timeout_ms: 3000,
    project_id: undefined
  }
  const answered = (...results: Array<Record<string, unknown>>) => ({ kind: "answered" as const, results: results as any })

  it("decides redact below a block and above a warning, also from a 503's verdicts", () => {
    const redacted = { ok: false, signal_id: "sig_1", action: "redact", rule_id: "rule_r", message: "keys out" }
    expect(decide(answered({ ok: true, signal_id: "sig_0", action: "warn", message: "w" }, redacted), settings))
      .toEqual({ kind: "redact", message: "keys out" })
    expect(decide(answered(redacted, { ok: false, signal_id: "sig_2", action: "block", message: "no" }), settings))
      .toEqual({ kind: "block", message: "no" })
    expect(decide({ kind: "unreachable", reason: "HTTP 503", blocked: { ok: false, action: "redact", rule_id: "rule_r" } }, settings))
      .toEqual({ kind: "redact", message: "Secrets taken out by signal-engine policy (rule_r)" })
  })

  const key = "AKIAZ7QX4WBR3KD2PLMN"
  const found = [{ kind: "aws_access_token", secret: key }]

  it("rewrites Claude Code's and Gemini CLI's tool input with the secrets replaced", () => {
    const input = { tool_name: "Bash", tool_input: { command: `echo ${key} > out.txt`, description: "save" } }
    const claude = rewriteReply("claude-code", "PreToolUse", input, found, "keys out")
    expect(JSON.parse(claude?.stdout ?? "{}")).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { command: "echo [REDACTED:aws_access_token] > out.txt", description: "save" } },
      systemMessage: "keys out"
    })
    const gemini = rewriteReply("gemini-cli", "BeforeTool", input, found, "keys out")
    expect(JSON.parse(gemini?.stdout ?? "{}").hookSpecificOutput.tool_input.command).toBe("echo [REDACTED:aws_access_token] > out.txt")
  })

  it("cannot rewrite a prompt, a tool output, Codex or Copilot, nor an input the secrets are not in: a block says why", () => {
    const input = { prompt: `my key is ${key}`, tool_input: { command: `echo ${key}` } }
    expect(rewriteReply("claude-code", "UserPromptSubmit", input, found, "m")).toBeUndefined()
    expect(rewriteReply("claude-code", "PostToolUse", input, found, "m")).toBeUndefined()
    expect(rewriteReply("codex", "PreToolUse", input, found, "m")).toBeUndefined()
    expect(rewriteReply("copilot-cli", "preToolUse", input, found, "m")).toBeUndefined()
    expect(rewriteReply("claude-code", "PreToolUse", { tool_input: { command: "cat .env" } }, found, "m")).toBeUndefined()
    expect(redactAsBlock("keys out", "Claude Code", "UserPromptSubmit")).toEqual({
      kind: "block",
      message: "keys out (Claude Code cannot have the secrets taken out at UserPromptSubmit, so it is blocked)"
    })
  })
})
