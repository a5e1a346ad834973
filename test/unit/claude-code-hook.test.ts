import { describe, expect, it } from "vitest"
import { decide } from "../../adapters/src/hook.js"
import { toolFields as adapterToolFields } from "../../adapters/src/tools/common.js"
import { claudeStyleBlock, claudeStyleTypes } from "../../adapters/src/tools/hooks-settings.js"
import { blockOutput, claudeHookTypes, hookOutput, hookSignal, toolFields } from "../../src/domain/claude-code-hook.ts"

/**
 * The engine's Claude Code HTTP-hook mapping is a port of the adapter's command-hook mapping (the
 * service image does not ship the adapter): these hold the two to the same answers.
 */
describe("the Claude Code hook mapping, as the adapter's", () => {
  it("maps the same events to the same signal types", () => {
    expect(claudeHookTypes).toEqual(claudeStyleTypes)
  })

  it("describes a tool call with the same fields", () => {
    const calls: Array<[string, unknown]> = [
      ["Bash", { command: "rm -rf /tmp/x", description: "clean" }],
      ["mcp__github__create_issue", { title: "t" }],
      ["Write", { file_path: "/a", content: "x".repeat(5000) }],
      ["Bash", "ls"]
    ]
    for (const [name, input] of calls) expect(toolFields(name, input)).toEqual(adapterToolFields(name, input))
  })

  it("blocks a prompt, a tool call and after a tool as the adapter does, and nothing elsewhere", () => {
    for (const event of ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"]) {
      const adapter = claudeStyleBlock(event, "no")
      expect(blockOutput(event, "no")).toEqual(adapter?.stdout === undefined ? undefined : JSON.parse(adapter.stdout))
    }
  })

  it("turns a verdict into the adapter's decision, open or closed", () => {
    const settings = (fail_mode: "open" | "closed") => ({
      url: "https://signals.example.com",
      license_key: "lic_0",
      fail_mode,
      send_prompts: false,
      timeout_ms: 3000,
      project_id: undefined
    })
    const verdicts = [
      { ok: true },
      { ok: false, action: "block", rule_id: "rule_1", message: "not here" },
      { ok: false, action: "block", rule_id: "rule_1" },
      { ok: true, action: "warn", rule_id: "rule_2", message: "careful" },
      { ok: true, action: "pending", reason: "no_owner" }
    ]
    for (const closed of [false, true]) {
      for (const v of verdicts) {
        const d = decide({ kind: "answered", results: [v as any] }, settings(closed ? "closed" : "open"))
        const expected = d.kind === "allow"
          ? {}
          : d.kind === "block"
          ? { decision: "block", reason: String(d.message).replace("the adapter fails", "the hook fails") }
          : { systemMessage: String(d.message).replace("the adapter fails", "the hook fails") }
        expect(hookOutput("UserPromptSubmit", v, closed)).toEqual(expected)
      }
    }
  })
})

describe("a hook input as a signal", () => {
  it("takes the session, the model the settings name and the prompt's length only", () => {
    const input = { session_id: "s1", cwd: "/w", hook_event_name: "UserPromptSubmit", prompt: "hello there" }
    expect(hookSignal(input, { model: "claude-sonnet-4-5", sendPrompts: false })).toEqual({
      event: "UserPromptSubmit",
      type: "user-prompt",
      session_id: "s1",
      metadata: { model: "claude-sonnet-4-5", cwd: "/w", prompt_chars: 11 }
    })
    expect(hookSignal(input, { model: undefined, sendPrompts: true })?.metadata).toEqual({ cwd: "/w", prompt: "hello there", prompt_chars: 11 })
  })

  it("prefers the input's own model, and makes none for an event without a signal", () => {
    expect(hookSignal({ session_id: "s", hook_event_name: "SessionStart", model: "opus", source: "startup" }, { model: "x", sendPrompts: false }))
      .toMatchObject({ type: "session-start", metadata: { model: "opus", source: "startup" } })
    expect(hookSignal({ session_id: "s", hook_event_name: "Notification" }, { sendPrompts: false })).toBeUndefined()
    expect(hookSignal("not an object", { sendPrompts: false })).toBeUndefined()
  })

  it("marks a failed tool call with its error", () => {
    const failed = hookSignal(
      { session_id: "s", hook_event_name: "PostToolUseFailure", tool_name: "Bash", tool_input: { command: "false" }, error: "exit 1" },
      {
        sendPrompts: false
      }
    )
    expect(failed?.metadata).toMatchObject({ tool_name: "Bash", command: "false", error: "exit 1" })
  })
})
