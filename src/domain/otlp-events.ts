/**
 * The coding tools' own OpenTelemetry log events as signals (OTLP ingest, src/http/engine/otlp-*.ts).
 * Pure: a decoded ExportLogsServiceRequest in, one outcome per log record out, in order.
 *
 * Each signal carries an idempotency key made exactly as the hook adapter makes its own for the
 * same thing (adapters/src/tools/common.js `keyFor`), so a model request or a tool run that both
 * report is one signal: whichever arrives second is a duplicate and counts nothing. Every other
 * record's key is fixed by the record itself, so an exporter's retry of a batch counts nothing twice.
 */

/** What the engine does with one log record. */
export type RecordOutcome =
  | {
    readonly _tag: "Signal"
    readonly signal: {
      readonly type: string
      readonly adapter: string
      readonly session_id: string
      readonly idempotency_key: string
      readonly metadata: Record<string, unknown>
    }
    /** The tool's own identity of the user (`user.email`, the record's over the resource's): a fleet credential's attribution. */
    readonly identity?: string | undefined
  }
  /** Telemetry that is not a signal (a plugin loaded, a setting resolved): acknowledged, not kept. */
  | { readonly _tag: "Ignored" }
  /** A record of an event the engine maps that it cannot take; counted as rejected. */
  | { readonly _tag: "Rejected"; readonly reason: string; readonly identity?: string | undefined }

type Attributes = ReadonlyMap<string, unknown>

/** The adapter's key for one thing of a session (the same function as adapters/src/tools/common.js). */
export const toolKey = (tool: string, sessionId: string, what: string): string => {
  const key = `${tool}:${sessionId}:${what}`
  return key.length <= 255 ? key.replace(/[^\x21-\x7e]/g, "_") : `${tool}:${sessionId.slice(0, 80)}:${fnv1a(what)}`
}

const fnv1a = (s: string) => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0
  return h.toString(16)
}

/** An OTLP AnyValue (plain form) as a scalar; arrays and maps are not read. */
const scalarOf = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return undefined
  const v = value as Record<string, unknown>
  return v.stringValue ?? v.intValue ?? v.doubleValue ?? v.boolValue
}

export const attributesOf = (list: unknown): Map<string, unknown> => {
  const map = new Map<string, unknown>()
  if (!Array.isArray(list)) return map
  for (const kv of list as Array<{ key?: unknown; value?: unknown }>) {
    if (typeof kv?.key === "string") map.set(kv.key, scalarOf(kv.value))
  }
  return map
}

const text = (a: Attributes, key: string): string | undefined => {
  const v = a.get(key)
  return typeof v === "string" && v !== "" ? v : typeof v === "number" || typeof v === "bigint" ? String(v) : undefined
}

/** A count or duration: OTLP ints, doubles, and the numeric strings some tools send. */
const number = (a: Attributes, key: string): number | undefined => {
  const v = a.get(key)
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

const compact = (o: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))

/** What a tool's events are read by (each builder names the adapter its signals are counted under, its hook adapter's). */
interface ToolTelemetry {
  /** The attribute naming the tool's own session (its hooks' session id). */
  readonly sessionAttribute: string
  /** Builds the signal of an event (its name without the prefix); undefined for events that make none. */
  readonly events: Record<string, (a: Attributes, session: string, record: RecordIdentity) => RecordOutcome>
}

/** What makes a record itself, for the keys of events the hooks never report. */
interface RecordIdentity {
  /** The event's name and its `event.sequence`, else its time. */
  readonly sequence: string
  /** The record's time, in nanoseconds since the epoch (a decimal string). */
  readonly time: unknown
}

const signal = (type: string, adapter: string, session: string, key: string, metadata: Record<string, unknown>): RecordOutcome => ({
  _tag: "Signal",
  signal: { type, adapter, session_id: session, idempotency_key: toolKey(adapter, session, key), metadata: compact({ ...metadata, source: "otel" }) }
})

const claudeCode: ToolTelemetry = {
  sessionAttribute: "session.id",
  events: {
    // One model request: the usage the hook adapter reads from the transcript, keyed by the same
    // request id (the transcript's `requestId`). Priced by the service, as the hook's usage is:
    // Claude Code's own estimate is kept beside it.
    api_request: (a, session, record) => {
      const requestId = text(a, "request_id")
      const input = number(a, "input_tokens") ?? 0
      const cacheRead = number(a, "cache_read_tokens") ?? 0
      const cacheWrite = number(a, "cache_creation_tokens") ?? 0
      return signal("token-milestone", "claude-code", session, requestId ? `request:${requestId}` : `otel:${record.sequence}`, {
        model: text(a, "model"),
        tokens_in: input + cacheRead + cacheWrite,
        tokens_out: number(a, "output_tokens") ?? 0,
        cache_read_tokens: cacheRead || undefined,
        cache_write_tokens: cacheWrite || undefined,
        latency_ms: number(a, "duration_ms"),
        request_id: requestId,
        prompt_id: text(a, "prompt.id"),
        reported_cost_usd: number(a, "cost_usd")
      })
    },
    // A failed model request: no tokens, its error (the HTTP status, else the message).
    api_error: (a, session, record) =>
      signal("token-milestone", "claude-code", session, `otel:${record.sequence}`, {
        model: text(a, "model"),
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: number(a, "duration_ms"),
        error_code: (text(a, "status_code") ?? text(a, "error") ?? "error").slice(0, 100),
        error: text(a, "error"),
        request_id: text(a, "request_id"),
        prompt_id: text(a, "prompt.id")
      }),
    // The prompt's text only when the user's telemetry includes it (OTEL_LOG_USER_PROMPTS=1).
    user_prompt: (a, session, record) => {
      const prompt = text(a, "prompt")
      return signal("user-prompt", "claude-code", session, `prompt:${text(a, "prompt.id") ?? record.sequence}`, {
        prompt: prompt === "<REDACTED>" ? undefined : prompt,
        prompt_length: number(a, "prompt_length"),
        prompt_id: text(a, "prompt.id")
      })
    },
    // A tool that ran, keyed by its tool_use_id as the adapter keys its PostToolUse signal.
    tool_result: (a, session, record) => {
      const toolUseId = text(a, "tool_use_id")
      const failed = text(a, "success") === "false"
      return signal("post-tool", "claude-code", session, toolUseId ? `tool:${toolUseId}` : `otel:${record.sequence}`, {
        tool_name: text(a, "tool_name"),
        tool_use_id: toolUseId,
        duration_ms: number(a, "duration_ms"),
        ...(failed ? { error: text(a, "error") ?? "failed" } : {}),
        prompt_id: text(a, "prompt.id")
      })
    }
  }
}

/** Gemini CLI writes absent values as "None" and booleans as "True"/"False". */
const geminiText = (a: Attributes, key: string): string | undefined => {
  const v = text(a, key)
  return v === "None" ? undefined : v
}

/**
 * The Gemini adapter's id of a call in its telemetry file: the record's time as the SDK's
 * [seconds, nanoseconds] joined with a dot, and the model (adapters/src/tools/gemini-usage.js).
 */
const geminiCallId = (timeUnixNano: unknown, model: string | undefined): string | undefined => {
  const ns = typeof timeUnixNano === "string" || typeof timeUnixNano === "number" ? String(timeUnixNano) : ""
  if (!/^\d{10,}$/.test(ns) || model === undefined) return undefined
  return `${ns.slice(0, -9)}.${Number(ns.slice(-9))}:${model}`
}

const geminiCli: ToolTelemetry = {
  sessionAttribute: "session.id",
  events: {
    // Every model call, the router's and helpers' included. The prompt's count includes the
    // cached tokens; the tool-use prompt is input and thinking is output, as the adapter counts.
    api_response: (a, session, record) => {
      const model = geminiText(a, "model")
      const id = geminiCallId(record.time, model)
      const status = geminiText(a, "status_code")
      return signal("token-milestone", "gemini-cli", session, id ? `request:${id}` : `otel:${record.sequence}`, {
        model,
        tokens_in: (number(a, "input_token_count") ?? 0) + (number(a, "tool_token_count") ?? 0),
        tokens_out: (number(a, "output_token_count") ?? 0) + (number(a, "thoughts_token_count") ?? 0),
        cache_read_tokens: number(a, "cached_content_token_count") || undefined,
        latency_ms: number(a, "duration_ms"),
        ...(status !== undefined && status !== "200" ? { error_code: status } : {}),
        prompt_id: geminiText(a, "prompt_id"),
        role: geminiText(a, "role")
      })
    },
    api_error: (a, session, record) =>
      signal("token-milestone", "gemini-cli", session, `otel:${record.sequence}`, {
        model: geminiText(a, "model"),
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: number(a, "duration_ms"),
        error_code: (geminiText(a, "status_code") ?? geminiText(a, "error_type") ?? "error").slice(0, 100),
        error: geminiText(a, "error"),
        prompt_id: geminiText(a, "prompt_id")
      }),
    user_prompt: (a, session, record) =>
      signal("user-prompt", "gemini-cli", session, `otel:${record.sequence}`, {
        prompt: geminiText(a, "prompt"),
        prompt_length: number(a, "prompt_length"),
        prompt_id: geminiText(a, "prompt_id")
      }),
    // A tool the user or the policy refused never ran: no post-tool.
    tool_call: (a, session, record) =>
      geminiText(a, "decision") === "reject"
        ? { _tag: "Ignored" }
        : signal("post-tool", "gemini-cli", session, `otel:${record.sequence}`, {
          tool_name: geminiText(a, "function_name"),
          mcp_server: geminiText(a, "mcp_server_name"),
          duration_ms: number(a, "duration_ms"),
          ...(geminiText(a, "success") === "False" ? { error: geminiText(a, "error") ?? "failed" } : {}),
          prompt_id: geminiText(a, "prompt_id")
        })
  }
}

/**
 * Codex (`[otel]` in config.toml): a model request's usage is its `response.completed` stream
 * event; `input_token_count` counts every input token, the cached ones included, as the
 * service's `tokens_in` does.
 */
const codex: ToolTelemetry = {
  sessionAttribute: "conversation.id",
  events: {
    sse_event: (a, session, record) =>
      text(a, "event.kind") !== "response.completed" || a.get("input_token_count") === undefined
        ? { _tag: "Ignored" }
        : signal("token-milestone", "codex", session, `otel:${record.sequence}`, {
          model: text(a, "model"),
          tokens_in: number(a, "input_token_count") ?? 0,
          tokens_out: number(a, "output_token_count") ?? 0,
          cache_read_tokens: number(a, "cached_token_count") || undefined,
          cache_write_tokens: number(a, "cache_write_token_count") || undefined
        }),
    // A request that failed (its usage, if any, is in its stream events).
    api_request: (a, session, record) => {
      const status = text(a, "http.response.status_code")
      const error = text(a, "error.message") ?? text(a, "error")
      return (status === undefined || status === "200") && error === undefined
        ? { _tag: "Ignored" }
        : signal("token-milestone", "codex", session, `otel:${record.sequence}`, {
          model: text(a, "model"),
          tokens_in: 0,
          tokens_out: 0,
          latency_ms: number(a, "duration_ms"),
          error_code: (status ?? "error").slice(0, 100),
          error
        })
    },
    user_prompt: (a, session, record) => {
      const prompt = text(a, "prompt")
      return signal("user-prompt", "codex", session, `otel:${record.sequence}`, {
        prompt: prompt === "[REDACTED]" ? undefined : prompt,
        prompt_length: number(a, "prompt_length")
      })
    },
    tool_result: (a, session, record) => {
      const callId = text(a, "call_id")
      return signal("post-tool", "codex", session, callId ? `tool:${callId}` : `otel:${record.sequence}`, {
        tool_name: text(a, "tool_name"),
        tool_use_id: callId,
        mcp_server: text(a, "mcp_server"),
        duration_ms: number(a, "duration_ms"),
        ...(text(a, "success") === "false" ? { error: "failed" } : {})
      })
    }
  }
}

/** By the prefix of their event names. */
const tools: ReadonlyMap<string, ToolTelemetry> = new Map([["claude_code", claudeCode], ["gemini_cli", geminiCli], ["codex", codex]])

/**
 * The event's full name: its `event.name` (Gemini CLI: `gemini_cli.api_response`), else the body
 * when that is a name (Claude Code: body `claude_code.api_request`, `event.name` `api_request`).
 */
const eventNameOf = (record: Record<string, unknown>, a: Attributes): string | undefined => {
  const named = text(a, "event.name")
  if (named?.includes(".")) return named
  const body = scalarOf(record.body)
  return typeof body === "string" && /^\w+\.[\w.]+$/.test(body) ? body : named
}

const outcomeOf = (record: Record<string, unknown>, resource: Attributes): RecordOutcome => {
  const a = new Map([...resource, ...attributesOf(record.attributes)])
  const outcome = outcomeOfEvent(record, a)
  return outcome._tag === "Ignored" ? outcome : { ...outcome, identity: text(a, "user.email") }
}

const outcomeOfEvent = (record: Record<string, unknown>, a: Attributes): RecordOutcome => {
  const name = eventNameOf(record, a)
  const dot = name?.indexOf(".") ?? -1
  if (name === undefined || dot === -1) return { _tag: "Ignored" }
  const tool = tools.get(name.slice(0, dot))
  const build = tool?.events[name.slice(dot + 1)]
  if (tool === undefined || build === undefined) return { _tag: "Ignored" }
  const session = text(a, tool.sessionAttribute)
  if (session === undefined) return { _tag: "Rejected", reason: `${name} without ${tool.sessionAttribute}` }
  if (session.length > 200) return { _tag: "Rejected", reason: `${name}: ${tool.sessionAttribute} is longer than 200 characters` }
  // Codex sets no record time (0) and no sequence: its event.timestamp, to the millisecond.
  const time = [record.timeUnixNano, record.observedTimeUnixNano].find((t) => t !== undefined && String(t) !== "0")
  const sequence = text(a, "event.sequence") ?? (time !== undefined ? String(time) : text(a, "event.timestamp") ?? "0")
  return build(a, session, { sequence: `${name}:${sequence}`, time: record.timeUnixNano })
}

/** One outcome per log record of an ExportLogsServiceRequest (plain form), in the request's order. */
export const logRecordOutcomes = (request: Record<string, unknown>): ReadonlyArray<RecordOutcome> => {
  const outcomes: Array<RecordOutcome> = []
  for (const rl of asArray(request.resourceLogs)) {
    const resource = attributesOf((rl.resource as Record<string, unknown> | undefined)?.attributes)
    for (const sl of asArray(rl.scopeLogs)) {
      for (const record of asArray(sl.logRecords)) outcomes.push(outcomeOf(record, resource))
    }
  }
  return outcomes
}

const asArray = (v: unknown): ReadonlyArray<Record<string, unknown>> =>
  Array.isArray(v) ? (v.filter((x) => typeof x === "object" && x !== null) as Array<Record<string, unknown>>) : []
