import { describe, expect, it } from "vitest"
import { toolFields as adapterToolFields } from "../../adapters/src/tools/common.js"
import { hookOutput, hookSignal, toolFields } from "../../src/domain/claude-code-hook.ts"

// The hook inputs Claude Code posts to an HTTP hook, and the whole signal each must make.

const common = { session_id: "8f2c1d9e-4b7a-4f0e-9c3d-2a1b0c9d8e7f", transcript_path: "/home/dev/.claude/projects/x.jsonl", cwd: "/home/dev/svc" }
const session = common.session_id

describe("a Claude Code hook input as a signal", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, unknown]> = [
    [
      "a session start: its source, the input's model",
      { ...common, hook_event_name: "SessionStart", source: "resume", model: "claude-opus-4-1" },
      { event: "SessionStart", type: "session-start", session_id: session, metadata: { model: "claude-opus-4-1", cwd: "/home/dev/svc", source: "resume" } }
    ],
    [
      "a session end: its reason",
      { ...common, hook_event_name: "SessionEnd", reason: "prompt_input_exit" },
      {
        event: "SessionEnd",
        type: "session-end",
        session_id: session,
        metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", reason: "prompt_input_exit" }
      }
    ],
    [
      "a compaction: its trigger",
      { ...common, hook_event_name: "PreCompact", trigger: "auto", custom_instructions: "" },
      { event: "PreCompact", type: "pre-compact", session_id: session, metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", trigger: "auto" } }
    ],
    [
      "a stop: the session and model only, whatever else the input carries",
      { ...common, hook_event_name: "Stop", stop_hook_active: false, source: "x", reason: "y", trigger: "z", prompt: "p", tool_name: "Bash" },
      { event: "Stop", type: "stop", session_id: session, metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc" } }
    ],
    [
      "a tool call about to run: its command, the whole input and its id",
      { ...common, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "npm test", description: "Run tests" }, tool_use_id: "toolu_01A" },
      {
        event: "PreToolUse",
        type: "pre-tool",
        session_id: session,
        metadata: {
          model: "claude-sonnet-4-5",
          cwd: "/home/dev/svc",
          tool_name: "Bash",
          command: "npm test",
          tool_input: "{\"command\":\"npm test\",\"description\":\"Run tests\"}",
          tool_use_id: "toolu_01A"
        }
      }
    ],
    [
      "a tool that ran and succeeded: its duration, no error",
      {
        ...common,
        hook_event_name: "PostToolUse",
        tool_name: "mcp__github__create_issue",
        tool_input: { title: "Bug" },
        tool_response: { is_error: false, content: "ok" },
        tool_use_id: "toolu_01B",
        duration_ms: 812
      },
      {
        event: "PostToolUse",
        type: "post-tool",
        session_id: session,
        metadata: {
          model: "claude-sonnet-4-5",
          cwd: "/home/dev/svc",
          tool_name: "mcp__github__create_issue",
          mcp_server: "github",
          tool_input: "{\"title\":\"Bug\"}",
          tool_use_id: "toolu_01B",
          duration_ms: 812
        }
      }
    ],
    [
      "a tool whose response is an error without a message: error `tool error`",
      { ...common, hook_event_name: "PostToolUse", tool_name: "Read", tool_input: { file_path: "/nope" }, tool_response: { is_error: true } },
      {
        event: "PostToolUse",
        type: "post-tool",
        session_id: session,
        metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", tool_name: "Read", tool_input: "{\"file_path\":\"/nope\"}", error: "tool error" }
      }
    ],
    [
      "a tool whose response carries an error: the error, cut to 500 characters",
      { ...common, hook_event_name: "PostToolUse", tool_name: "WebFetch", tool_response: { error: "E".repeat(600) } },
      {
        event: "PostToolUse",
        type: "post-tool",
        session_id: session,
        metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", tool_name: "WebFetch", error: "E".repeat(500) }
      }
    ],
    [
      "a tool whose response is text: no error",
      { ...common, hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_response: "error: none" },
      {
        event: "PostToolUse",
        type: "post-tool",
        session_id: session,
        metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", tool_name: "Bash", command: "ls", tool_input: "{\"command\":\"ls\"}" }
      }
    ],
    [
      "a tool the user interrupted: its error and the interruption",
      {
        ...common,
        hook_event_name: "PostToolUseFailure",
        tool_name: "Bash",
        tool_input: { command: "sleep 100" },
        error: "Interrupted by user",
        is_interrupt: true
      },
      {
        event: "PostToolUseFailure",
        type: "post-tool",
        session_id: session,
        metadata: {
          model: "claude-sonnet-4-5",
          cwd: "/home/dev/svc",
          tool_name: "Bash",
          command: "sleep 100",
          tool_input: "{\"command\":\"sleep 100\"}",
          error: "Interrupted by user",
          interrupted: true
        }
      }
    ],
    [
      "a tool that failed without a message: error `tool error`, cut to 500 characters otherwise",
      { ...common, hook_event_name: "PostToolUseFailure", tool_name: "Bash", is_interrupt: false },
      {
        event: "PostToolUseFailure",
        type: "post-tool",
        session_id: session,
        metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", tool_name: "Bash", error: "tool error" }
      }
    ],
    [
      "a tool that failed with a long message: cut to 500 characters",
      { ...common, hook_event_name: "PostToolUseFailure", tool_name: "Bash", error: "F".repeat(700) },
      {
        event: "PostToolUseFailure",
        type: "post-tool",
        session_id: session,
        metadata: { model: "claude-sonnet-4-5", cwd: "/home/dev/svc", tool_name: "Bash", error: "F".repeat(500) }
      }
    ],
    [
      "an input without a session or working directory: session `unknown`",
      { hook_event_name: "UserPromptSubmit", cwd: 42 },
      { event: "UserPromptSubmit", type: "user-prompt", session_id: "unknown", metadata: { model: "claude-sonnet-4-5" } }
    ],
    [
      "a session id past 200 characters: cut to 200",
      { hook_event_name: "Stop", session_id: "s".repeat(250), model: 7 },
      { event: "Stop", type: "stop", session_id: "s".repeat(200), metadata: { model: "claude-sonnet-4-5" } }
    ]
  ]
  it.each(cases)("%s", (_, input, expected) => {
    expect(hookSignal(input, { model: "claude-sonnet-4-5", sendPrompts: true })).toStrictEqual(expected)
  })

  it("keeps a prompt of up to 8000 characters whole and cuts a longer one, counting all of it", () => {
    const prompt = (n: number) => hookSignal({ ...common, hook_event_name: "UserPromptSubmit", prompt: "p".repeat(n) }, { sendPrompts: true })?.metadata
    expect(prompt(8000)).toStrictEqual({ cwd: "/home/dev/svc", prompt: "p".repeat(8000), prompt_chars: 8000 })
    expect(prompt(8001)).toStrictEqual({ cwd: "/home/dev/svc", prompt: `${"p".repeat(8000)}…`, prompt_chars: 8001 })
  })

  it("makes no signal of what is not a hook input", () => {
    for (const input of [null, undefined, 42, "UserPromptSubmit", { session_id: "s" }, { hook_event_name: "Notification" }]) {
      expect(hookSignal(input, { sendPrompts: false })).toBeUndefined()
    }
  })
})

describe("a tool call's fields, as the adapter's", () => {
  const calls: ReadonlyArray<readonly [string | undefined, unknown, Record<string, unknown>]> = [
    ["Bash", { command: "x".repeat(4001) }, {
      tool_name: "Bash",
      command: `${"x".repeat(4000)}…`,
      tool_input: `${JSON.stringify({ command: "x".repeat(4001) }).slice(0, 2000)}…`
    }],
    ["Bash", { command: "x".repeat(1985) }, { tool_name: "Bash", command: "x".repeat(1985), tool_input: JSON.stringify({ command: "x".repeat(1985) }) }],
    ["exec_command", { cmd: ["git", "status", "--short"] }, {
      tool_name: "exec_command",
      command: "git status --short",
      tool_input: "{\"cmd\":[\"git\",\"status\",\"--short\"]}"
    }],
    ["exec_command", { cmd: ["git", 1] }, { tool_name: "exec_command", tool_input: "{\"cmd\":[\"git\",1]}" }],
    ["local_shell", { command: 5 }, { tool_name: "local_shell", tool_input: "{\"command\":5}" }],
    ["PowerShell", "Get-ChildItem", { tool_name: "PowerShell", command: "Get-ChildItem", tool_input: "Get-ChildItem" }],
    ["Read", "/etc/hosts", { tool_name: "Read", tool_input: "/etc/hosts" }],
    ["terminal", 42, { tool_name: "terminal", tool_input: "42" }],
    [undefined, "ls", { tool_input: "ls" }],
    ["Write", null, { tool_name: "Write" }],
    ["Edit", "", { tool_name: "Edit" }],
    ["mcp__docs", { q: 1 }, { tool_name: "mcp__docs", tool_input: "{\"q\":1}" }],
    ["x_mcp__docs__search", {}, { tool_name: "x_mcp__docs__search", tool_input: "{}" }],
    ["mcp__a__b__c", {}, { tool_name: "mcp__a__b__c", mcp_server: "a", tool_input: "{}" }],
    ["", {}, { tool_input: "{}" }]
  ]
  it.each(["Bash", "shell", "run_shell_command", "shell_command", "exec_command", "local_shell", "Terminal", "powershell"])(
    "reads %s's input given as text as its command",
    (name) => {
      expect(toolFields(name, "make build")).toStrictEqual({ tool_name: name, command: "make build", tool_input: "make build" })
    }
  )
  it.each(calls)("%s %j", (name, input, expected) => {
    expect(toolFields(name, input)).toStrictEqual(expected)
    expect(toolFields(name, input)).toStrictEqual(adapterToolFields(name, input))
  })
})

describe("a verdict as Claude Code's hook output", () => {
  const cases: ReadonlyArray<readonly [string, string, Record<string, unknown>, boolean, Record<string, unknown>]> = [
    ["a block before a tool: denied with the message", "PreToolUse", { ok: false, message: "no rm" }, false, {
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm" }
    }],
    ["a block without a message or rule", "PostToolUse", { ok: false }, false, { decision: "block", reason: "Blocked by signal-engine policy" }],
    ["a block at a stop: nothing to stop, a system message", "Stop", { ok: false, rule_id: "r_7" }, false, {
      systemMessage: "Blocked by signal-engine policy (r_7)"
    }],
    ["a warning without a message or rule", "PreToolUse", { ok: true, action: "warn" }, true, { systemMessage: "Warning from signal-engine policy" }],
    ["a warning with a rule", "Stop", { ok: true, action: "warn", rule_id: "r_8" }, false, { systemMessage: "Warning from signal-engine policy (r_8)" }],
    ["no verdict in time, failing open, no reason", "PreToolUse", { ok: true, action: "pending" }, false, {
      systemMessage: "signal-engine has no verdict yet (pending); allowed because the hook fails open"
    }],
    ["no verdict in time, failing closed, before a tool", "PreToolUse", { ok: true, action: "pending", reason: "timeout" }, true, {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "signal-engine has no verdict yet (pending: timeout); blocked because the hook fails closed"
      }
    }],
    ["no verdict in time, failing closed, at session end", "SessionEnd", { ok: true, action: "pending" }, true, {
      systemMessage: "signal-engine has no verdict yet (pending); blocked because the hook fails closed"
    }],
    ["an allow, failing closed", "Stop", { ok: true, action: "allow" }, true, {}],
    ["an allow with a redaction: nothing to say", "UserPromptSubmit", { ok: true, action: "redact", message: "m" }, true, {}]
  ]
  it.each(cases)("%s", (_, event, verdict, failClosed, expected) => {
    expect(hookOutput(event, verdict as never, failClosed)).toStrictEqual(expected)
  })
})
