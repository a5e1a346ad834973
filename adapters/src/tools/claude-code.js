// @ts-check
import { join } from "node:path"
import { newKey } from "../client.js"
import {
  askClaude,
  claudeProcess,
  configuredModel,
  isCommandOutput,
  modelName,
  modelSwitchOf,
  probeEnv,
  sessionOnlyPickOf,
  userConfigDir
} from "./claude-code-model.js"
import { recordSwitch, settledSwitch, switchedModel } from "./claude-code-switch.js"
import { compact, keyFor, promptFields, toolFields, usageFields } from "./common.js"
import { claudeStyleBlock, claudeStyleEvents, claudeStyleHook, claudeStyleTypes, installHooks, missingHooks, uninstallHooks } from "./hooks-settings.js"
import { canReachStderr, tellUser } from "./terminal.js"
import { readNewLines, rememberIds } from "./transcript.js"

const name = "claude-code"

/**
 * The events that make signals, and the two a model switch fires (`/model`, the picker, for this
 * session only or saved): they make none, but tell the session's model before any prompt can follow.
 */
const events = [...claudeStyleEvents(Object.keys(claudeStyleTypes)), { event: "PreModelSwitch" }, { event: "PostModelSwitch" }]

/**
 * The model calls the transcript gained since the last hook: assistant messages with their usage,
 * once per message id (Claude Code writes one line per content block, each with the usage), one
 * entry per model request; the state keeps the offset and the ids already counted.
 */
const newUsage = (/** @type {any} */ input, /** @type {Record<string, any>} */ state) => {
  const { lines, offset } = readNewLines(input.transcript_path, Number(state.offset ?? 0))
  const seen = new Set(state.ids ?? [])
  /** @type {Map<string, any>} */
  const messages = new Map()
  /**
   * @type {{ args: string, name?: string, answered?: boolean } | undefined} a `/model` switch no
   * model's answer has followed yet; for the picker, whether its own answer line has
   */
  let switched
  let answeredAt = Number(state.answeredAt ?? 0)
  for (const line of lines) {
    const args = modelSwitchOf(line)
    const picked = switched?.args === "" ? sessionOnlyPickOf(line) : undefined
    if (args !== undefined) switched = { args }
    else if (picked) switched = { args: "", name: picked, answered: true }
    else if (switched?.args === "" && isCommandOutput(line)) switched = { ...switched, answered: true }
    else if (line?.type === "assistant" && line.message?.model !== "<synthetic>") {
      switched = undefined
      answeredAt = Math.max(answeredAt, Date.parse(line.timestamp) || 0)
    }
    const m = line?.message
    if (line?.type !== "assistant" || !m?.usage || typeof m.id !== "string" || seen.has(m.id)) continue
    // The last line of a message carries its final usage; its requestId names the model request.
    messages.set(m.id, { message: m, requestId: typeof line.requestId === "string" ? line.requestId : undefined })
  }
  /** @type {Array<{ model?: string, input: number, output: number, cacheRead: number, cacheWrite: number, key: string }>} */
  const usage = []
  let model = state.model
  for (const [id, { message: m, requestId }] of messages) {
    if (m.model === "<synthetic>") continue
    model = m.model ?? model
    const u = m.usage
    usage.push({
      model: m.model,
      input: Number(u.input_tokens ?? 0),
      output: Number(u.output_tokens ?? 0),
      cacheRead: Number(u.cache_read_input_tokens ?? 0),
      cacheWrite: Number(u.cache_creation_input_tokens ?? 0),
      // Claude Code's OpenTelemetry export names the same request by this id (api_request's
      // request_id): the engine keys both alike, so a request reported by both counts once.
      key: requestId ? `request:${requestId}` : `usage:${id}`
    })
  }
  const ids = [...messages.keys()]
  return { usage, ids, offset, model, switched, state: { ...state, offset, model, answeredAt, ids: rememberIds(state.ids, ids) } }
}

/**
 * The model the session's next request goes to: the one SessionStart names (interactive sessions),
 * the one a switch hook named while no model has answered since, a `/model` switch the transcript
 * shows since the last hook (for a Claude Code without switch hooks), else the model that answered last (transcript), else, as
 * the first prompt of a print-mode session, whatever Claude Code resolves from its built-in default,
 * settings, ANTHROPIC_MODEL and the session's flags (asked once, then kept in the session's state).
 * Asking is skipped where the answer is certain without it: a full model ID configured, and no flag
 * on the session's command line that could choose another.
 */
const currentModel = async (
  /** @type {any} */ input,
  /** @type {ReturnType<typeof newUsage>} */ read,
  /** @type {string | undefined} */ switchedTo,
  /** @type {import("../hook.js").HookContext} */ ctx
) => {
  const cwd = typeof input.cwd === "string" ? input.cwd : undefined
  const named = modelName(input.model) ?? modelName(switchedTo)
  if (named) return { model: named, seen: true }
  // Only Claude Code itself can be asked, and only from a hook it runs (it sets CLAUDECODE and
  // CLAUDE_PID), never from the probe's own session.
  if (ctx.env[probeEnv] || !(ctx.env.CLAUDE_PID || ctx.env.CLAUDECODE === "1")) return { model: read.model ?? configuredModel(cwd, ctx.env), seen: false }
  if (read.switched) {
    const claude = claudeProcess(ctx.env)
    const { args, name } = read.switched
    const id = modelName(args)
    if (id) return { model: id, seen: true }
    const { "--model": _flag, ...flags } = claude.flags ?? {}
    // A model picked for this session only is named, not saved: its family's alias is asked for,
    // and taken only if Claude Code shows that alias as the same model (else it stays unknown).
    if (name) {
      const asked = await askClaude(ctx.env, { ...claude, flags }, cwd, { "--model": name.split(" ")[0]?.toLowerCase() ?? "" })
      return asked.name === name ? { model: asked.model, seen: true } : { model: undefined, seen: false }
    }
    // An alias is resolved as a --model flag. The picker ("") saves its choice as the user's
    // default model, which a session without the --model flag it was started with then resolves.
    const asked = await askClaude(ctx.env, { ...claude, flags }, cwd, args === "" ? {} : { "--model": args })
    return { model: asked.model ?? read.model, seen: asked.model !== undefined }
  }
  if (read.model) return { model: read.model, seen: true }
  const claude = claudeProcess(ctx.env)
  const configured = configuredModel(cwd, ctx.env)
  if (configured && claude.flags && Object.keys(claude.flags).length === 0) return { model: configured, seen: false }
  const { model: asked } = await askClaude(ctx.env, claude, cwd)
  return asked ? { model: asked, seen: true } : { model: configured, seen: false }
}

/** @type {import("../hook.js").Tool} */
export const claudeCode = {
  name,
  title: "Claude Code",
  configPath: ({ project, cwd, env }) => (project ? join(cwd, ".claude", "settings.json") : join(userConfigDir(env), "settings.json")),
  install: (config, command) => installHooks(config, events, command, { timeout: 30 }),
  uninstall: uninstallHooks,
  check: (config) => missingHooks(config, events),
  unseen: () =>
    canReachStderr() ? [] : [
      "claude -p with text or json output shows no hook warning on this system (no /proc to reach its stderr):",
      "fail open, a refused key and warn verdicts show only in the interactive UI and in --output-format stream-json"
    ],
  plan: async (input, ctx) => {
    const sessionOf = String(input.session_id ?? "unknown")
    if (input.hook_event_name === "PreModelSwitch" || input.hook_event_name === "PostModelSwitch") {
      ctx.state.write(name, sessionOf, recordSwitch(input, ctx.state.read(name, sessionOf, ctx.env)), ctx.env)
      return { signals: [] }
    }
    const hook = claudeStyleHook(name, input, ctx)
    if (!hook) return { signals: [] }
    const { type, sessionId } = hook
    const landed = await settledSwitch(
      () => ctx.state.read(name, sessionId, ctx.env),
      (state) => ctx.state.write(name, sessionId, state, ctx.env)
    )
    const before = { ...hook.before, ...landed }
    let read = newUsage(input, before)
    const switchedTo = switchedModel(landed.switched, read.state.answeredAt)
    // Without switch hooks (an older Claude Code) the picker's answer ("Set model to … for this
    // session only") is the transcript's line after the command, which a prompt can beat.
    for (let waited = 0; !switchedTo && read.switched?.args === "" && !read.switched.answered && waited < 1_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50))
      read = newUsage(input, before)
    }
    const { model, seen } = await currentModel(input, read, switchedTo, ctx)
    ctx.state.write(name, sessionId, { ...read.state, ...(seen ? { model } : {}) }, ctx.env)
    /** @type {Record<string, unknown>} */
    let metadata = { model, cwd: input.cwd }
    if (type === "user-prompt") metadata = { ...metadata, ...promptFields(input.prompt, ctx.settings) }
    if (type === "pre-tool" || type === "post-tool") {
      metadata = { ...metadata, ...toolFields(input.tool_name, input.tool_input), tool_use_id: input.tool_use_id }
    }
    if (type === "post-tool") metadata = { ...metadata, duration_ms: input.duration_ms, ...toolError(input) }
    if (type === "session-start") metadata = { ...metadata, source: input.source }
    if (type === "session-end") metadata = { ...metadata, reason: input.reason }
    if (type === "pre-compact") metadata = { ...metadata, trigger: input.trigger }
    // Each model request the transcript gained is a token-milestone of its own, before the event's
    // signal, keyed by the request: reading the same calls twice, or Claude Code's telemetry
    // reporting them too (OTLP ingest), never counts them twice.
    const milestones = read.usage.map((u) => ({
      type: "token-milestone",
      session_id: sessionId,
      metadata: compact({ ...usageFields(u), cwd: input.cwd }),
      idempotency_key: keyFor(name, sessionId, u.key)
    }))
    // A tool run is keyed by its tool_use_id, as the telemetry's tool_result is.
    const key = type === "post-tool" && typeof input.tool_use_id === "string" ? keyFor(name, sessionId, `tool:${input.tool_use_id}`) : newKey()
    return { signals: [...milestones, { type, session_id: sessionId, metadata: compact(metadata), idempotency_key: key }] }
  },
  reply: (decision, input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    if (decision.kind === "allow") return { exitCode: 0 }
    const message = decision.message ?? ""
    const blocked = decision.kind === "block" ? claudeStyleBlock(event, message) : undefined
    if (blocked) return blocked
    // A warning, or a block where nothing is left to stop (the tool already ran, the turn ended):
    // a system message, which the UI and stream-json show; `claude -p` with text or json output
    // prints none, so there it is also written to Claude Code's own stderr.
    const claude = canReachStderr() ? claudeProcess(ctx.env) : undefined
    if (claude?.print && claude.outputFormat !== "stream-json") {
      tellUser(claude.pid, message, { tool: name, sessionId: String(input.session_id ?? "unknown"), ctx })
    }
    return { exitCode: 0, stdout: JSON.stringify({ systemMessage: message }) }
  }
}

/** A failed tool call: PostToolUseFailure's `error`, or an error inside PostToolUse's tool_response. */
const toolError = (/** @type {any} */ input) => {
  if (input.hook_event_name === "PostToolUseFailure") {
    return { error: String(input.error ?? "tool error").slice(0, 500), ...(input.is_interrupt === true ? { interrupted: true } : {}) }
  }
  const response = input.tool_response
  return response && typeof response === "object" && (response.is_error === true || response.error)
    ? { error: String(response.error ?? "tool error").slice(0, 500) }
    : {}
}
