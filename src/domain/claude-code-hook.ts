/**
 * Claude Code's hook protocol as the engine speaks it to an HTTP hook (managed settings, no
 * adapter installed): the hook input JSON Claude Code posts becomes a signal, and a verdict
 * becomes the JSON output Claude Code obeys. The same mapping as the adapter's command hooks
 * (adapters/src/tools/hooks-settings.js, common.js), ported because the service image does not
 * ship the adapter package; test/unit/claude-code-hook.test.ts holds the two together.
 */

/** Hook events that make a signal, and its type (the adapter's `claudeStyleTypes`). */
export const claudeHookTypes: Readonly<Record<string, string>> = {
  SessionStart: "session-start",
  UserPromptSubmit: "user-prompt",
  PreToolUse: "pre-tool",
  PostToolUse: "post-tool",
  PostToolUseFailure: "post-tool",
  PreCompact: "pre-compact",
  Stop: "stop",
  SessionEnd: "session-end"
}

/** Text cut to `max` characters: tool inputs can be whole files, and metadata is bounded. */
const clip = (value: unknown, max = 2000): string | undefined => {
  if (value === undefined || value === null) return undefined
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return text.length > max ? `${text.slice(0, max)}…` : text
}

const shellTools = new Set(["bash", "shell", "run_shell_command", "shell_command", "exec_command", "local_shell", "terminal", "powershell"])

const commandOf = (toolName: string | undefined, input: any): string | undefined => {
  if (input === null || typeof input !== "object") {
    return toolName !== undefined && shellTools.has(toolName.toLowerCase()) && typeof input === "string" ? input : undefined
  }
  const c = input.command ?? input.cmd
  if (typeof c === "string") return c
  if (Array.isArray(c) && c.every((x) => typeof x === "string")) return c.join(" ")
  return undefined
}

const mcpServerOf = (toolName: string | undefined): string | undefined => (toolName ? /^mcp__(.+?)__/.exec(toolName)?.[1] : undefined)

/** Without the keys whose value is missing or empty (as the adapter sends them). */
const compact = (o: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== ""))

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined)

/** The tool-call fields of a pre-tool or post-tool signal (the adapter's `toolFields`). */
export const toolFields = (toolName: string | undefined, toolInput: unknown): Record<string, unknown> =>
  compact({ tool_name: toolName, command: clip(commandOf(toolName, toolInput), 4000), mcp_server: mcpServerOf(toolName), tool_input: clip(toolInput) })

/** A failed tool call: PostToolUseFailure's `error`, or an error inside PostToolUse's tool_response. */
const toolError = (input: any): Record<string, unknown> => {
  if (input.hook_event_name === "PostToolUseFailure") {
    return { error: String(input.error ?? "tool error").slice(0, 500), ...(input.is_interrupt === true ? { interrupted: true } : {}) }
  }
  const response = input.tool_response
  return response && typeof response === "object" && (response.is_error === true || response.error)
    ? { error: String(response.error ?? "tool error").slice(0, 500) }
    : {}
}

export interface HookSignal {
  readonly event: string
  readonly type: string
  readonly session_id: string
  readonly metadata: Record<string, unknown>
}

/**
 * The signal of one hook input, or undefined for an event that makes none. The model is the
 * input's own (`model`, which SessionStart carries) or the one the hook's settings name (`model`
 * here): the engine cannot read the transcript the adapter reads it from.
 */
export const hookSignal = (input: any, options: { readonly model?: string | undefined; readonly sendPrompts: boolean }): HookSignal | undefined => {
  if (input === null || typeof input !== "object") return undefined
  const event = String(input.hook_event_name ?? "")
  const type = claudeHookTypes[event]
  if (type === undefined) return undefined
  const session_id = String(input.session_id ?? "unknown").slice(0, 200)
  let metadata: Record<string, unknown> = { model: str(input.model) ?? options.model, cwd: str(input.cwd) }
  if (type === "user-prompt" && typeof input.prompt === "string") {
    metadata = { ...metadata, prompt: options.sendPrompts ? clip(input.prompt, 8000) : undefined, prompt_chars: input.prompt.length }
  }
  if (type === "pre-tool" || type === "post-tool") {
    metadata = { ...metadata, ...toolFields(str(input.tool_name), input.tool_input), tool_use_id: input.tool_use_id }
  }
  if (type === "post-tool") metadata = { ...metadata, duration_ms: input.duration_ms, ...toolError(input) }
  if (type === "session-start") metadata = { ...metadata, source: input.source }
  if (type === "session-end") metadata = { ...metadata, reason: input.reason }
  if (type === "pre-compact") metadata = { ...metadata, trigger: input.trigger }
  return { event, type, session_id, metadata: compact(metadata) }
}

/** The engine's answer to one signal, as far as the hook's answer needs it. */
export interface HookVerdict {
  readonly ok: boolean
  readonly action?: string | undefined
  readonly message?: string | undefined
  readonly rule_id?: string | undefined
  readonly reason?: string | undefined
}

/** A block where there is something to stop (the adapter's `claudeStyleBlock`); undefined elsewhere. */
export const blockOutput = (event: string, message: string): Record<string, unknown> | undefined => {
  if (event === "UserPromptSubmit" || event === "PostToolUse") return { decision: "block", reason: message }
  if (event === "PreToolUse") {
    return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: message } }
  }
  return undefined
}

const productName = "signal-engine"

/**
 * The JSON output Claude Code reads from the hook's answer: `{}` to go on, a block with the
 * rule's message, or a system message (a warning; a block where nothing is left to stop). No
 * verdict in time (`pending`) follows the fail mode, as the adapter's does.
 */
export const hookOutput = (event: string, verdict: HookVerdict, failClosed: boolean): Record<string, unknown> => {
  let decision: { kind: "allow" } | { kind: "block" | "warn"; message: string } = { kind: "allow" }
  if (verdict.ok === false) {
    decision = { kind: "block", message: verdict.message ?? `Blocked by ${productName} policy${verdict.rule_id ? ` (${verdict.rule_id})` : ""}` }
  } else if (verdict.action === "pending") {
    const why = `${productName} has no verdict yet (pending${verdict.reason ? `: ${verdict.reason}` : ""})`
    decision = failClosed ? { kind: "block", message: `${why}; blocked because the hook fails closed` } : {
      kind: "warn",
      message: `${why}; allowed because the hook fails open`
    }
  } else if (verdict.action === "warn") {
    decision = { kind: "warn", message: verdict.message ?? `Warning from ${productName} policy${verdict.rule_id ? ` (${verdict.rule_id})` : ""}` }
  }
  if (decision.kind === "allow") return {}
  return (decision.kind === "block" ? blockOutput(event, decision.message) : undefined) ?? { systemMessage: decision.message }
}
