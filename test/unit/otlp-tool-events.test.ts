import { describe, expect, it } from "vitest"
import { keyFor } from "../../adapters/src/tools/common.js"
import { logRecordOutcomes, type RecordOutcome, toolKey } from "../../src/domain/otlp-events.ts"

// The log records Claude Code, Gemini CLI and Codex export, as the OTLP/JSON decoder hands them
// over, and the outcome each must make: the whole signal, so a field that appears, vanishes or
// changes its key shows.

type Scalar = string | number | bigint | boolean | null
const anyValue = (v: Scalar) =>
  typeof v === "string"
    ? { stringValue: v }
    : typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v))
    ? { intValue: v }
    : typeof v === "number"
    ? { doubleValue: v }
    : typeof v === "boolean"
    ? { boolValue: v }
    : v
const attributes = (o: Record<string, Scalar>) => Object.entries(o).map(([key, v]) => ({ key, value: anyValue(v) }))
const batch = (resource: Record<string, Scalar>, ...logRecords: ReadonlyArray<unknown>) => ({
  resourceLogs: [{ resource: { attributes: attributes(resource) }, scopeLogs: [{ logRecords }] }]
})
const outcomeOf = (resource: Record<string, Scalar>, record: unknown): RecordOutcome | undefined => logRecordOutcomes(batch(resource, record))[0]

const signal = (
  type: string,
  adapter: string,
  session: string,
  what: string,
  metadata: Record<string, unknown>,
  identity?: string
) => ({
  _tag: "Signal",
  signal: { type, adapter, session_id: session, idempotency_key: keyFor(adapter, session, what), metadata: { ...metadata, source: "otel" } },
  identity
})

// Claude Code: body `claude_code.<event>`, `event.name` `<event>`, a per-session `event.sequence`.
const claude = (event: string, a: Record<string, Scalar>) => ({
  timeUnixNano: "1795870089005000000",
  body: { stringValue: `claude_code.${event}` },
  attributes: attributes({ "event.name": event, "session.id": "cc-1", ...a })
})
const claudeResource = { "service.name": "claude-code", "user.email": "dev@example.com" }

describe("Claude Code's telemetry events as signals", () => {
  const cases: ReadonlyArray<readonly [string, unknown, unknown]> = [
    [
      "a request without a request id: keyed by its sequence, no cache or cost fields when there are none",
      claude("api_request", {
        "event.sequence": 12,
        model: "claude-haiku-4-5",
        input_tokens: 900,
        output_tokens: 120,
        cache_read_tokens: 0,
        cache_creation_tokens: 0,
        duration_ms: 0
      }),
      signal("token-milestone", "claude-code", "cc-1", "otel:claude_code.api_request:12", {
        model: "claude-haiku-4-5",
        tokens_in: 900,
        tokens_out: 120,
        latency_ms: 0
      }, "dev@example.com")
    ],
    [
      "a request with an empty request id and counts sent as text: the counts read, the id absent",
      claude("api_request", {
        "event.sequence": "13",
        request_id: "",
        model: "claude-opus-4-1",
        input_tokens: "2048",
        output_tokens: " ",
        cache_read_tokens: "-1",
        "prompt.id": "pr-7",
        cost_usd: 0.25,
        duration_ms: " ",
        prompt_length: true
      }),
      signal("token-milestone", "claude-code", "cc-1", "otel:claude_code.api_request:13", {
        model: "claude-opus-4-1",
        tokens_in: 2048,
        tokens_out: 0,
        prompt_id: "pr-7",
        reported_cost_usd: 0.25
      }, "dev@example.com")
    ],
    [
      "a failed request without a status: its error message, cut to 100 characters, is the error code",
      claude("api_error", {
        "event.sequence": 14,
        model: "claude-sonnet-4-5",
        error: `Connection error: ${"x".repeat(120)}`,
        request_id: "req_9",
        "prompt.id": "pr-7",
        duration_ms: 30012
      }),
      signal("token-milestone", "claude-code", "cc-1", "otel:claude_code.api_error:14", {
        model: "claude-sonnet-4-5",
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 30012,
        error_code: `Connection error: ${"x".repeat(120)}`.slice(0, 100),
        error: `Connection error: ${"x".repeat(120)}`,
        request_id: "req_9",
        prompt_id: "pr-7"
      }, "dev@example.com")
    ],
    [
      "a failed request with neither status nor message: error code `error`",
      claude("api_error", { "event.sequence": 15 }),
      signal("token-milestone", "claude-code", "cc-1", "otel:claude_code.api_error:15", { tokens_in: 0, tokens_out: 0, error_code: "error" }, "dev@example.com")
    ],
    [
      "a failed request with a status: the status is the error code",
      claude("api_error", { "event.sequence": 16, status_code: 429, error: "rate_limit_error" }),
      signal("token-milestone", "claude-code", "cc-1", "otel:claude_code.api_error:16", {
        tokens_in: 0,
        tokens_out: 0,
        error_code: "429",
        error: "rate_limit_error"
      }, "dev@example.com")
    ],
    [
      "a prompt logged with its text (OTEL_LOG_USER_PROMPTS=1) and no prompt id: text kept, keyed by the record",
      claude("user_prompt", { "event.sequence": 17, prompt: "fix the login bug", prompt_length: 17 }),
      signal("user-prompt", "claude-code", "cc-1", "prompt:claude_code.user_prompt:17", { prompt: "fix the login bug", prompt_length: 17 }, "dev@example.com")
    ],
    [
      "a prompt with its id: keyed by the prompt id",
      claude("user_prompt", { "event.sequence": 18, "prompt.id": "pr-8", prompt: "<REDACTED>", prompt_length: 40 }),
      signal("user-prompt", "claude-code", "cc-1", "prompt:pr-8", { prompt_length: 40, prompt_id: "pr-8" }, "dev@example.com")
    ],
    [
      "a tool that succeeded, without a tool_use_id: no error, keyed by the record",
      claude("tool_result", { "event.sequence": 19, tool_name: "Read", success: "true", duration_ms: 3, "prompt.id": "pr-8" }),
      signal("post-tool", "claude-code", "cc-1", "otel:claude_code.tool_result:19", { tool_name: "Read", duration_ms: 3, prompt_id: "pr-8" }, "dev@example.com")
    ],
    [
      "a tool that failed without a message: error `failed`",
      claude("tool_result", { "event.sequence": 20, tool_name: "Bash", tool_use_id: "toolu_01", success: "false" }),
      signal("post-tool", "claude-code", "cc-1", "tool:toolu_01", { tool_name: "Bash", tool_use_id: "toolu_01", error: "failed" }, "dev@example.com")
    ]
  ]
  it.each(cases)("%s", (_, record, expected) => {
    expect(outcomeOf(claudeResource, record)).toStrictEqual(expected)
  })

  it("reads a sequence the decoder hands over as a 64-bit integer", () => {
    expect(outcomeOf({}, claude("api_error", { "event.sequence": 21n, status_code: "500" }))).toStrictEqual(
      signal("token-milestone", "claude-code", "cc-1", "otel:claude_code.api_error:21", { tokens_in: 0, tokens_out: 0, error_code: "500" })
    )
  })
})

// Gemini CLI: `event.name` `gemini_cli.<event>`, a sentence as the body, "None" for absent values.
const gemini = (event: string, a: Record<string, Scalar>, time: unknown = "1795870089250000000") => ({
  timeUnixNano: time,
  body: { stringValue: "API response from gemini-2.5-pro. Status: 429." },
  attributes: attributes({ "event.name": `gemini_cli.${event}`, "session.id": "g-1", ...a })
})

describe("Gemini CLI's telemetry events as signals", () => {
  const cases: ReadonlyArray<readonly [string, unknown, unknown]> = [
    [
      "a failed response: its status is the error code, the role and prompt id kept",
      gemini("api_response", {
        model: "gemini-2.5-pro",
        input_token_count: 1500,
        output_token_count: 0,
        cached_content_token_count: 0,
        duration_ms: 812,
        status_code: 429,
        prompt_id: "p-3",
        role: "main"
      }),
      signal("token-milestone", "gemini-cli", "g-1", "request:1795870089.250000000:gemini-2.5-pro", {
        model: "gemini-2.5-pro",
        tokens_in: 1500,
        tokens_out: 0,
        latency_ms: 812,
        error_code: "429",
        prompt_id: "p-3",
        role: "main"
      })
    ],
    [
      "a response whose time is a number: the same call id as its decimal string",
      gemini("api_response", { model: "gemini-2.5-flash", input_token_count: 10, status_code: "200", role: "None" }, 1795870089000000000),
      signal("token-milestone", "gemini-cli", "g-1", "request:1795870089.0:gemini-2.5-flash", { model: "gemini-2.5-flash", tokens_in: 10, tokens_out: 0 })
    ],
    [
      "a response without a model (\"None\"): keyed by the record",
      gemini("api_response", { model: "None", "event.sequence": 4 }),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_response:4", { tokens_in: 0, tokens_out: 0 })
    ],
    [
      "a response whose time is too short to be nanoseconds since the epoch: keyed by the record",
      gemini("api_response", { model: "gemini-2.5-pro" }, "123456789"),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_response:123456789", { model: "gemini-2.5-pro", tokens_in: 0, tokens_out: 0 })
    ],
    [
      "a response whose time has text around its digits: keyed by the record",
      gemini("api_response", { model: "gemini-2.5-pro", "event.sequence": 5 }, "t1795870089250000000"),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_response:5", { model: "gemini-2.5-pro", tokens_in: 0, tokens_out: 0 })
    ],
    [
      "a response whose time ends in text: keyed by the record",
      gemini("api_response", { model: "gemini-2.5-pro", "event.sequence": 6 }, "1795870089250000000Z"),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_response:6", { model: "gemini-2.5-pro", tokens_in: 0, tokens_out: 0 })
    ],
    [
      "a failed call: its status, else its error type, is the error code",
      gemini("api_error", {
        "event.sequence": 7,
        model: "gemini-2.5-pro",
        status_code: "None",
        error_type: "RESOURCE_EXHAUSTED",
        error: "quota",
        duration_ms: 90,
        prompt_id: "p-3"
      }),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_error:7", {
        model: "gemini-2.5-pro",
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 90,
        error_code: "RESOURCE_EXHAUSTED",
        error: "quota",
        prompt_id: "p-3"
      })
    ],
    [
      "a failed call with a status",
      gemini("api_error", { "event.sequence": 8, status_code: 503, error_type: "UNAVAILABLE", error: "None" }),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_error:8", { tokens_in: 0, tokens_out: 0, error_code: "503" })
    ],
    [
      "a failed call with a long error type: cut to 100 characters",
      gemini("api_error", { "event.sequence": 9, error_type: `${"E".repeat(150)}` }),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_error:9", { tokens_in: 0, tokens_out: 0, error_code: "E".repeat(100) })
    ],
    [
      "a failed call with no status or type: error code `error`",
      gemini("api_error", { "event.sequence": 10 }),
      signal("token-milestone", "gemini-cli", "g-1", "otel:gemini_cli.api_error:10", { tokens_in: 0, tokens_out: 0, error_code: "error" })
    ],
    [
      "a prompt",
      gemini("user_prompt", { "event.sequence": 11, prompt: "add a test", prompt_length: 10, prompt_id: "p-4" }),
      signal("user-prompt", "gemini-cli", "g-1", "otel:gemini_cli.user_prompt:11", { prompt: "add a test", prompt_length: 10, prompt_id: "p-4" })
    ],
    [
      "a tool call the user refused: no signal",
      gemini("tool_call", { "event.sequence": 12, function_name: "run_shell_command", decision: "reject" }),
      { _tag: "Ignored" }
    ],
    [
      "an MCP tool that failed without a message: error `failed`",
      gemini("tool_call", {
        "event.sequence": 13,
        function_name: "search",
        mcp_server_name: "docs",
        decision: "accept",
        success: "False",
        error: "None",
        duration_ms: 40,
        prompt_id: "p-4"
      }),
      signal("post-tool", "gemini-cli", "g-1", "otel:gemini_cli.tool_call:13", {
        tool_name: "search",
        mcp_server: "docs",
        duration_ms: 40,
        error: "failed",
        prompt_id: "p-4"
      })
    ],
    [
      "a tool that failed with a message",
      gemini("tool_call", { "event.sequence": 14, function_name: "run_shell_command", success: "False", error: "exit 2" }),
      signal("post-tool", "gemini-cli", "g-1", "otel:gemini_cli.tool_call:14", { tool_name: "run_shell_command", error: "exit 2" })
    ],
    [
      "a tool that succeeded: no error",
      gemini("tool_call", { "event.sequence": 15, function_name: "read_file", decision: "auto_accept", success: "True", error: "None" }),
      signal("post-tool", "gemini-cli", "g-1", "otel:gemini_cli.tool_call:15", { tool_name: "read_file" })
    ]
  ]
  it.each(cases)("%s", (_, record, expected) => {
    expect(outcomeOf({ "service.name": "gemini-cli" }, record)).toStrictEqual(expected)
  })
})

// Codex: `event.name` `codex.<event>`, the session in `conversation.id`, no record time and no
// sequence, its `event.timestamp` instead.
const codex = (event: string, a: Record<string, Scalar>) => ({
  timeUnixNano: "0",
  attributes: attributes({ "event.name": `codex.${event}`, "conversation.id": "cx-1", "event.timestamp": "2026-11-28T16:20:01.123Z", ...a })
})
const at = "2026-11-28T16:20:01.123Z"

describe("Codex's telemetry events as signals", () => {
  const cases: ReadonlyArray<readonly [string, unknown, unknown]> = [
    [
      "a completed response: its usage, the cached tokens within the input",
      codex("sse_event", {
        "event.kind": "response.completed",
        model: "gpt-5-codex",
        input_token_count: 12000,
        output_token_count: 800,
        cached_token_count: 9000,
        cache_write_token_count: 0
      }),
      signal("token-milestone", "codex", "cx-1", `otel:codex.sse_event:${at}`, {
        model: "gpt-5-codex",
        tokens_in: 12000,
        tokens_out: 800,
        cache_read_tokens: 9000
      })
    ],
    [
      "a completed response with cache writes and no output count",
      codex("sse_event", { "event.kind": "response.completed", input_token_count: 50, cache_write_token_count: 20 }),
      signal("token-milestone", "codex", "cx-1", `otel:codex.sse_event:${at}`, { tokens_in: 50, tokens_out: 0, cache_write_tokens: 20 })
    ],
    ["another stream event: no signal", codex("sse_event", { "event.kind": "response.output_item.done", input_token_count: 5 }), { _tag: "Ignored" }],
    ["a completed response without usage: no signal", codex("sse_event", { "event.kind": "response.completed" }), { _tag: "Ignored" }],
    ["a request that succeeded: no signal", codex("api_request", { "http.response.status_code": 200, duration_ms: 900 }), { _tag: "Ignored" }],
    ["a request without a status or an error: no signal", codex("api_request", { duration_ms: 900 }), { _tag: "Ignored" }],
    [
      "a request that failed with a status",
      codex("api_request", { model: "gpt-5-codex", "http.response.status_code": 503, duration_ms: 1200 }),
      signal("token-milestone", "codex", "cx-1", `otel:codex.api_request:${at}`, {
        model: "gpt-5-codex",
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 1200,
        error_code: "503"
      })
    ],
    [
      "a request that failed without a status: its error message, error code `error`",
      codex("api_request", { "error.message": "stream disconnected before completion" }),
      signal("token-milestone", "codex", "cx-1", `otel:codex.api_request:${at}`, {
        tokens_in: 0,
        tokens_out: 0,
        error_code: "error",
        error: "stream disconnected before completion"
      })
    ],
    [
      "a request with status 200 and an error",
      codex("api_request", { "http.response.status_code": "200", error: "idle timeout" }),
      signal("token-milestone", "codex", "cx-1", `otel:codex.api_request:${at}`, { tokens_in: 0, tokens_out: 0, error_code: "200", error: "idle timeout" })
    ],
    [
      "a redacted prompt: its length only",
      codex("user_prompt", { prompt: "[REDACTED]", prompt_length: 23 }),
      signal("user-prompt", "codex", "cx-1", `otel:codex.user_prompt:${at}`, { prompt_length: 23 })
    ],
    [
      "a prompt with its text",
      codex("user_prompt", { prompt: "run the tests" }),
      signal("user-prompt", "codex", "cx-1", `otel:codex.user_prompt:${at}`, { prompt: "run the tests" })
    ],
    [
      "an MCP tool that failed, keyed by its call id",
      codex("tool_result", { tool_name: "lookup", call_id: "call_7", mcp_server: "docs", success: "false", duration_ms: 15 }),
      signal("post-tool", "codex", "cx-1", "tool:call_7", { tool_name: "lookup", tool_use_id: "call_7", mcp_server: "docs", duration_ms: 15, error: "failed" })
    ],
    [
      "a tool that succeeded without a call id",
      codex("tool_result", { tool_name: "shell", success: "true" }),
      signal("post-tool", "codex", "cx-1", `otel:codex.tool_result:${at}`, { tool_name: "shell" })
    ]
  ]
  it.each(cases)("%s", (_, record, expected) => {
    expect(outcomeOf({ "service.name": "codex_cli_rs" }, record)).toStrictEqual(expected)
  })
})

describe("a log record's identity, session and key", () => {
  it("attributes a signal to the record's user.email over the resource's, and an ignored record to no one", () => {
    const outcomes = logRecordOutcomes(batch(
      { "user.email": "team@example.com" },
      claude("api_error", { "event.sequence": 1, "user.email": "dev@example.com" }),
      claude("api_error", { "event.sequence": 2 }),
      claude("plugin_loaded", { "event.sequence": 3 }),
      claude("api_error", { "event.sequence": 4, "session.id": "" })
    ))
    expect(outcomes.map((o) => "identity" in o ? o.identity : o._tag)).toEqual(["dev@example.com", "team@example.com", "Ignored", "team@example.com"])
    expect(outcomes[2]).toStrictEqual({ _tag: "Ignored" })
    expect(outcomes[3]).toStrictEqual({ _tag: "Rejected", reason: "claude_code.api_error without session.id", identity: "team@example.com" })
  })

  it("takes a session id of up to 200 characters and rejects a longer one", () => {
    const [taken, rejected] = logRecordOutcomes(batch(
      {},
      claude("api_error", { "event.sequence": 1, "session.id": "s".repeat(200) }),
      codex("api_request", { "conversation.id": "c".repeat(201), "http.response.status_code": 500 })
    ))
    expect(taken).toMatchObject({ _tag: "Signal", signal: { session_id: "s".repeat(200) } })
    expect(rejected).toStrictEqual({ _tag: "Rejected", reason: "codex.api_request: conversation.id is longer than 200 characters", identity: undefined })
  })

  it("keys a record without a sequence by its time, its observed time when it has none, else its timestamp", () => {
    const keys = logRecordOutcomes(batch(
      {},
      { ...codex("user_prompt", {}), timeUnixNano: "1795870089000000001" },
      { ...codex("user_prompt", {}), observedTimeUnixNano: "1795870089000000002" },
      { ...codex("user_prompt", {}), timeUnixNano: undefined, observedTimeUnixNano: "0" },
      { ...codex("user_prompt", { "event.timestamp": "" }) }
    )).map((o) => o._tag === "Signal" ? o.signal.idempotency_key : o._tag)
    expect(keys).toEqual([
      keyFor("codex", "cx-1", "otel:codex.user_prompt:1795870089000000001"),
      keyFor("codex", "cx-1", "otel:codex.user_prompt:1795870089000000002"),
      keyFor("codex", "cx-1", `otel:codex.user_prompt:${at}`),
      keyFor("codex", "cx-1", "otel:codex.user_prompt:0")
    ])
  })

  it("names an event by its body only when the body is an event name", () => {
    const outcomes = logRecordOutcomes(batch(
      {},
      { body: { stringValue: "retrying claude_code.api_error" }, attributes: attributes({ "session.id": "s", "event.sequence": 1 }) },
      { body: { stringValue: "claude_code.api_error" }, attributes: attributes({ "session.id": "s", "event.sequence": 2 }) },
      { body: { stringValue: "see claude_code.api_error" }, attributes: attributes({ "event.name": "api_error", "session.id": "s" }) },
      { body: { intValue: 5 }, attributes: attributes({ "event.name": "codex.user_prompt", "conversation.id": "c" }) }
    ))
    expect(outcomes.map((o) => o._tag === "Signal" ? o.signal.idempotency_key : o._tag)).toEqual([
      "Ignored",
      keyFor("claude-code", "s", "otel:claude_code.api_error:2"),
      "Ignored",
      keyFor("codex", "c", "otel:codex.user_prompt:0")
    ])
  })

  it("skips what is not a record, an attribute or a value, and reads an empty request as no records", () => {
    expect(logRecordOutcomes({})).toEqual([])
    expect(logRecordOutcomes({ resourceLogs: "x" })).toEqual([])
    expect(logRecordOutcomes({ resourceLogs: [null, { scopeLogs: [null, { logRecords: [null, 7] }] }] })).toEqual([])
    const [outcome] = logRecordOutcomes({
      resourceLogs: [{
        resource: { attributes: [null, { key: "user.email", value: null }, { value: { stringValue: "orphan" } }] },
        scopeLogs: [{ logRecords: [{ ...claude("api_error", { "event.sequence": 1 }), body: null }] }]
      }]
    })
    expect(outcome).toStrictEqual({ _tag: "Ignored" })
  })

  it("keys exactly as the hook adapter at the 255-character limit and past it with a long session", () => {
    const session = "s".repeat(150)
    const exact = "w".repeat(255 - "claude-code:".length - session.length - 1)
    for (const what of [exact, `${exact}w`]) {
      expect(toolKey("claude-code", session, what)).toBe(keyFor("claude-code", session, what))
    }
    expect(toolKey("claude-code", session, exact)).toHaveLength(255)
  })
})
