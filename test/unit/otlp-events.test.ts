import { describe, expect, it } from "vitest"
import { keyFor } from "../../adapters/src/tools/common.js"
import { logRecordOutcomes, toolKey } from "../../src/domain/otlp-events.ts"

const attr = (key: string, value: string | number) => ({ key, value: typeof value === "string" ? { stringValue: value } : { intValue: value } })
const request = (...records: ReadonlyArray<Record<string, unknown>>) => ({
  resourceLogs: [{ resource: { attributes: [attr("service.name", "claude-code")] }, scopeLogs: [{ logRecords: records }] }]
})
const record = (name: string, attributes: Record<string, string | number>) => ({
  body: { stringValue: `claude_code.${name}` },
  attributes: [attr("event.name", name), ...Object.entries(attributes).map(([k, v]) => attr(k, v))]
})

describe("Claude Code's log events as signals", () => {
  it("keys a record exactly as the hook adapter keys the same thing", () => {
    for (const [session, what] of [["s-1", "request:req_1"], ["a b\u00e9", "tool:toolu_1"], ["s", "x".repeat(300)]] as const) {
      expect(toolKey("claude-code", session, what)).toBe(keyFor("claude-code", session, what))
    }
  })

  it("makes an api_request a token-milestone with the request's usage, keyed by its request id", () => {
    const [outcome] = logRecordOutcomes(request(record("api_request", {
      "session.id": "s-1",
      "event.sequence": 5,
      model: "claude-sonnet-4-5",
      input_tokens: 1200,
      output_tokens: 300,
      cache_read_tokens: 5000,
      cache_creation_tokens: 800,
      cost_usd: "0.0126",
      duration_ms: 50,
      request_id: "req_1"
    })))
    expect(outcome).toEqual({
      _tag: "Signal",
      signal: {
        type: "token-milestone",
        adapter: "claude-code",
        session_id: "s-1",
        idempotency_key: keyFor("claude-code", "s-1", "request:req_1"),
        metadata: {
          model: "claude-sonnet-4-5",
          tokens_in: 7000,
          tokens_out: 300,
          cache_read_tokens: 5000,
          cache_write_tokens: 800,
          latency_ms: 50,
          request_id: "req_1",
          reported_cost_usd: 0.0126,
          source: "otel"
        }
      }
    })
  })

  it("makes prompts user-prompt and tool results post-tool, without a redacted prompt's text", () => {
    const outcomes = logRecordOutcomes(request(
      record("user_prompt", { "session.id": "s", "prompt.id": "p", prompt: "<REDACTED>", prompt_length: "9" }),
      record("tool_result", { "session.id": "s", tool_name: "Bash", tool_use_id: "toolu_1", success: "false", error: "exit 1", duration_ms: "45" }),
      record("api_error", { "session.id": "s", "event.sequence": 9, model: "m", status_code: "529", error: "overloaded" })
    ))
    expect(outcomes.map((o) => o._tag === "Signal" ? [o.signal.type, o.signal.metadata] : o._tag)).toEqual([
      ["user-prompt", { prompt_length: 9, prompt_id: "p", source: "otel" }],
      ["post-tool", { tool_name: "Bash", tool_use_id: "toolu_1", duration_ms: 45, error: "exit 1", source: "otel" }],
      ["token-milestone", { model: "m", tokens_in: 0, tokens_out: 0, error_code: "529", error: "overloaded", source: "otel" }]
    ])
    const tool = outcomes[1]!
    expect(tool._tag === "Signal" && tool.signal.idempotency_key).toBe(keyFor("claude-code", "s", "tool:toolu_1"))
  })

  it("rejects a mapped event without its session, and ignores events and tools it does not map", () => {
    const outcomes = logRecordOutcomes(request(
      record("api_request", { model: "m", input_tokens: 1, request_id: "r" }),
      record("plugin_loaded", { "session.id": "s" }),
      { body: { stringValue: "other_tool.api_request" }, attributes: [attr("session.id", "s")] },
      { attributes: [] }
    ))
    expect(outcomes.map((o) => o._tag)).toEqual(["Rejected", "Ignored", "Ignored", "Ignored"])
    expect(outcomes[0]).toMatchObject({ reason: "claude_code.api_request without session.id" })
  })

  it("gives a record without a request id the same key each time it is sent", () => {
    const batch = request(record("api_request", { "session.id": "s", "event.sequence": 3, model: "m", input_tokens: 1 }))
    const [a] = logRecordOutcomes(batch)
    const [b] = logRecordOutcomes(batch)
    expect(a).toEqual(b)
  })

  it("makes Gemini CLI's api_response a token-milestone keyed as the Gemini adapter names the call", () => {
    const [outcome, rejected] = logRecordOutcomes({
      resourceLogs: [{
        scopeLogs: [{
          logRecords: [
            {
              timeUnixNano: "1795870089005000000",
              body: { stringValue: "API response from gemini-3.8-flash. Status: 200." },
              attributes: [
                attr("session.id", "g-1"),
                attr("event.name", "gemini_cli.api_response"),
                attr("model", "gemini-3.8-flash"),
                attr("input_token_count", "7026"),
                attr("output_token_count", "317"),
                attr("cached_content_token_count", "5000"),
                attr("thoughts_token_count", "3"),
                attr("tool_token_count", "4"),
                attr("duration_ms", "554"),
                attr("status_code", "200"),
                attr("prompt_id", "p")
              ]
            },
            { body: { stringValue: "Tool call" }, attributes: [attr("event.name", "gemini_cli.tool_call"), attr("decision", "accept")] }
          ]
        }]
      }]
    })
    expect(outcome).toMatchObject({
      _tag: "Signal",
      signal: {
        type: "token-milestone",
        adapter: "gemini-cli",
        session_id: "g-1",
        // The file exporter's hrTime [1795870089, 5000000] joined with a dot, and the model.
        idempotency_key: keyFor("gemini-cli", "g-1", "request:1795870089.5000000:gemini-3.8-flash"),
        metadata: { model: "gemini-3.8-flash", tokens_in: 7030, tokens_out: 320, cache_read_tokens: 5000, latency_ms: 554 }
      }
    })
    expect(rejected).toMatchObject({ _tag: "Rejected", reason: "gemini_cli.tool_call without session.id" })
  })
})
