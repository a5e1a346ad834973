// @ts-check
import { readFileSync } from "../builtins.js"
import { join } from "node:path"
import { homedir } from "node:os"
import { newKey } from "../client.js"
import { compact, keyFor, promptFields, toolFields, usageFields } from "./common.js"
import { claudeStyleBlock, claudeStyleEvents, claudeStyleHook, claudeStyleTypes, installHooks, missingHooks, uninstallHooks } from "./hooks-settings.js"
import { readNewLines, rememberIds } from "./transcript.js"

const name = "claude-code"

const events = claudeStyleEvents(Object.keys(claudeStyleTypes))

/**
 * The model calls the transcript gained since the last hook: assistant messages with their usage,
 * once per message id (Claude Code writes one line per content block, each with the usage).
 * Summed per model; the state keeps the offset and the ids already counted.
 */
const newUsage = (/** @type {any} */ input, /** @type {Record<string, any>} */ state) => {
  const { lines, offset } = readNewLines(input.transcript_path, Number(state.offset ?? 0))
  const seen = new Set(state.ids ?? [])
  /** @type {Map<string, any>} */
  const messages = new Map()
  for (const line of lines) {
    const m = line?.message
    if (line?.type !== "assistant" || !m?.usage || typeof m.id !== "string" || seen.has(m.id)) continue
    messages.set(m.id, m) // the last line of a message carries its final usage
  }
  /** @type {Map<string, { model?: string, input: number, output: number, cacheRead: number, cacheWrite: number }>} */
  const byModel = new Map()
  let model = state.model
  for (const m of messages.values()) {
    if (m.model === "<synthetic>") continue
    model = m.model ?? model
    const u = m.usage
    const sum = byModel.get(m.model) ?? { model: m.model, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    sum.input += Number(u.input_tokens ?? 0)
    sum.output += Number(u.output_tokens ?? 0)
    sum.cacheRead += Number(u.cache_read_input_tokens ?? 0)
    sum.cacheWrite += Number(u.cache_creation_input_tokens ?? 0)
    byModel.set(m.model, sum)
  }
  const ids = [...messages.keys()]
  return { usage: [...byModel.values()], ids, offset, model, state: { ...state, offset, model, ids: rememberIds(state.ids, ids) } }
}

/** Claude Code's own names for "whichever model is current": not a model a rule or a price knows. */
const aliases = /^(default|best|sonnet|opus|haiku|opusplan)(\[.*\])?$/i

/** A configured model as the API will see it ("claude-sonnet-4-5[1m]" asks for the 1M context of claude-sonnet-4-5). */
const modelName = (/** @type {unknown} */ value) =>
  typeof value === "string" && value.trim() !== "" && !aliases.test(value.trim()) ? value.trim().replace(/\[.*\]$/, "") : undefined

const settingsModel = (/** @type {string} */ path) => {
  try {
    return modelName(JSON.parse(readFileSync(path, "utf8"))?.model)
  } catch {
    return undefined
  }
}

const userConfigDir = (/** @type {NodeJS.ProcessEnv} */ env) => env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude")

/**
 * The model Claude Code is configured to start with, before the transcript says which one answered
 * (the hook input does not name it in print mode): ANTHROPIC_MODEL, then the `model` of the local,
 * project and user settings, in Claude Code's own order. `--model` is not visible to hooks.
 */
const configuredModel = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env) => {
  const fromEnv = modelName(env.ANTHROPIC_MODEL)
  if (fromEnv) return fromEnv
  const project = env.CLAUDE_PROJECT_DIR || cwd
  const files = [
    ...(project ? [join(project, ".claude", "settings.local.json"), join(project, ".claude", "settings.json")] : []),
    join(userConfigDir(env), "settings.json")
  ]
  for (const file of files) {
    const model = settingsModel(file)
    if (model) return model
  }
  return undefined
}

/** @type {import("../hook.js").Tool} */
export const claudeCode = {
  name,
  title: "Claude Code",
  configPath: ({ project, cwd, env }) => (project ? join(cwd, ".claude", "settings.json") : join(userConfigDir(env), "settings.json")),
  install: (config, command) => installHooks(config, events, command, { timeout: 30 }),
  uninstall: uninstallHooks,
  check: (config) => missingHooks(config, events),
  plan: (input, ctx) => {
    const hook = claudeStyleHook(name, input, ctx)
    if (!hook) return { signals: [] }
    const { type, sessionId, before } = hook
    const read = newUsage(input, before)
    // The model that answered last (transcript), else the one the session started with (SessionStart
    // names it in interactive sessions), else the configured one.
    const seen = modelName(input.model) ?? read.model
    const model = seen ?? configuredModel(typeof input.cwd === "string" ? input.cwd : undefined, ctx.env)
    ctx.state.write(name, sessionId, { ...read.state, ...(seen ? { model: seen } : {}) }, ctx.env)
    /** @type {Record<string, unknown>} */
    let metadata = { model, cwd: input.cwd }
    if (type === "user-prompt") metadata = { ...metadata, ...promptFields(input.prompt, ctx.settings) }
    if (type === "pre-tool" || type === "post-tool") metadata = { ...metadata, ...toolFields(input.tool_name, input.tool_input), tool_use_id: input.tool_use_id }
    if (type === "post-tool") metadata = { ...metadata, duration_ms: input.duration_ms, ...toolError(input) }
    if (type === "session-start") metadata = { ...metadata, source: input.source }
    if (type === "session-end") metadata = { ...metadata, reason: input.reason }
    if (type === "pre-compact") metadata = { ...metadata, trigger: input.trigger }
    // The usage the transcript gained rides on the event's own signal, except on pre-tool (judged,
    // never counted): there, and for a second model in the same stretch (rare, so every model is
    // priced as itself), it goes as a token-milestone of its own, keyed by the message ids so that
    // reading the same calls twice never counts them twice.
    const [first, ...others] = read.usage
    const own = type === "pre-tool" ? undefined : first
    const milestones = (own ? others : read.usage).map((u) => ({
      type: "token-milestone",
      session_id: sessionId,
      metadata: compact({ ...usageFields(u), cwd: input.cwd }),
      idempotency_key: keyFor(name, sessionId, `usage:${read.ids.join(",")}:${u.model}`)
    }))
    const signal = compact({ ...metadata, ...(own ? usageFields(own) : {}) })
    return { signals: [...milestones, { type, session_id: sessionId, metadata: signal, idempotency_key: newKey() }] }
  },
  reply: (decision, input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    if (decision.kind === "allow") return { exitCode: 0 }
    const message = decision.message ?? ""
    const blocked = decision.kind === "block" ? claudeStyleBlock(event, message) : undefined
    if (blocked) return blocked
    // A warning, or a block where nothing is left to stop (the tool already ran, the turn ended).
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
