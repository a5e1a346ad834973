// @ts-check
import { homedir } from "node:os"
import { join } from "node:path"
import { newKey } from "../client.js"
import { compact, keyFor, promptFields, toolFields } from "./common.js"
import { installHooks, missingHooks, uninstallHooks } from "./hooks-settings.js"
import { promptModels } from "./gemini-model.js"
import { readNewLines, rememberIds } from "./transcript.js"

/**
 * Gemini CLI (`@google/gemini-cli`): command hooks in settings.json (`~/.gemini/settings.json`,
 * `.gemini/settings.json` in a project), enabled by default (`hooksConfig.enabled`). Every hook
 * gets `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp` on stdin and answers
 * with JSON on stdout (exit 0), or exit 2 with the reason on stderr (a block).
 *
 * - BeforeAgent (`prompt`) → `user-prompt`, judged before the CLI sends anything. It names no
 *   model: the model comes from the CLI's flag, variable or settings (gemini-model.js); under
 *   "auto" the prompt goes to a classifier model and then to Pro or Flash, so it is judged as each
 *   (the others as token-free `token-milestone` checks). A block is `continue: false` ("Agent
 *   execution stopped: <reason>"). BeforeModel judges a model the turn was not judged for (a
 *   switch the settings do not show) before its call.
 * - BeforeTool (`tool_name`, `tool_input`, `mcp_context`) → `pre-tool`; a block is
 *   `decision: "deny"` (the tool does not run; the reason goes to the model as the tool's error).
 * - AfterTool (`tool_response` with `llmContent`, `returnDisplay`, `error`) → `post-tool`.
 * - AfterAgent → `stop`; SessionStart (`source`) → `session-start`; SessionEnd (`reason`) →
 *   `session-end`.
 * - Tokens come from the transcript (JSONL; a `gemini` message carries `model` and `tokens`
 *   {input (all input tokens, cached included), output, cached, thoughts, tool}, written once the
 *   response is complete; a message is appended again when it changes, so it is counted once by
 *   id). AfterModel is not used: it runs once per streamed chunk and its `usageMetadata` has no
 *   cached-token count, so the cost it would give is wrong.
 * - PreCompress is not used: 0.61 fires it before every turn (trigger "auto") whether or not
 *   anything is compressed.
 */
const name = "gemini-cli"

const events = [
  { event: "SessionStart" },
  { event: "BeforeAgent" },
  { event: "BeforeModel" },
  { event: "BeforeTool", matcher: "*" },
  { event: "AfterTool", matcher: "*" },
  { event: "AfterAgent" },
  { event: "SessionEnd" }
]

/** What a hook may take: the CLI kills a hook after `timeout` ms (60 s by default). */
const hookTimeoutMs = 30_000

/**
 * The model calls the transcript gained since the last hook, summed per model: `gemini` messages
 * with their tokens, each message id once (the CLI appends a message again when tool calls are
 * added to it). The state keeps the offset and the ids already counted.
 */
const newUsage = (/** @type {any} */ input, /** @type {Record<string, any>} */ state) => {
  const { lines, offset } = readNewLines(typeof input.transcript_path === "string" ? input.transcript_path : undefined, Number(state.offset ?? 0))
  const seen = new Set(state.ids ?? [])
  /** @type {Map<string, any>} */
  const messages = new Map()
  for (const line of lines) {
    if (line?.type !== "gemini" || typeof line.id !== "string" || !line.tokens || seen.has(line.id) || messages.has(line.id)) continue
    messages.set(line.id, line)
  }
  /** @type {Map<string, { model?: string, input: number, output: number, cacheRead: number }>} */
  const byModel = new Map()
  for (const m of messages.values()) {
    const t = m.tokens
    const model = typeof m.model === "string" ? m.model : state.model
    const sum = byModel.get(model) ?? { model, input: 0, output: 0, cacheRead: 0 }
    // promptTokenCount already counts the cached tokens; the tool-use prompt is input too, and
    // thinking is billed as output.
    sum.input += Number(t.input ?? 0) + Number(t.tool ?? 0)
    sum.output += Number(t.output ?? 0) + Number(t.thoughts ?? 0)
    sum.cacheRead += Number(t.cached ?? 0)
    byModel.set(model, sum)
  }
  const ids = [...messages.keys()]
  return { usage: [...byModel.values()], ids, state: { ...state, offset, ids: rememberIds(state.ids, ids) } }
}

const usageMetadata = (/** @type {{ model?: string, input: number, output: number, cacheRead: number }} */ u) =>
  compact({ model: u.model, tokens_in: u.input, tokens_out: u.output, cache_read_tokens: u.cacheRead || undefined })

/**
 * A model the prompt may reach besides the one its signal names, judged as a signal of its own: a
 * token-milestone with no tokens (nothing to count; a model_filter rule judges its model).
 */
const modelCheck = (/** @type {string} */ sessionId, /** @type {string} */ model, /** @type {unknown} */ cwd, /** @type {unknown} */ setting) => ({
  type: "token-milestone",
  session_id: sessionId,
  metadata: compact({ model, cwd, model_setting: setting }),
  idempotency_key: newKey()
})

/** Gemini CLI names MCP tools `mcp_<server>_<tool>` and says the server in `mcp_context`. */
const mcpServer = (/** @type {any} */ input) =>
  typeof input.mcp_context?.server_name === "string" ? input.mcp_context.server_name : undefined

const toolError = (/** @type {any} */ response) =>
  response && typeof response === "object" && response.error
    ? { error: String(typeof response.error === "object" ? response.error.message ?? JSON.stringify(response.error) : response.error).slice(0, 500) }
    : {}

/** The hooks' shell is bash (`bash -c`) on Linux and macOS: our command as installed. */
const configDir = (/** @type {NodeJS.ProcessEnv} */ env) => join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini")

/** @type {import("../hook.js").Tool} */
export const geminiCli = {
  name,
  title: "Gemini CLI",
  configPath: ({ project, cwd, env }) => (project ? join(cwd, ".gemini", "settings.json") : join(configDir(env), "settings.json")),
  install: (config, command) => installHooks(config, events, command, { name: "signal-engine", timeout: hookTimeoutMs }),
  uninstall: uninstallHooks,
  check: (config) => [
    ...missingHooks(config, events),
    ...(config?.hooksConfig?.enabled === false ? ["hooks are disabled (hooksConfig.enabled is false)"] : [])
  ],
  plan: (input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    const sessionId = String(input.session_id ?? ctx.env.GEMINI_SESSION_ID ?? "unknown")
    const before = ctx.state.read(name, sessionId, ctx.env)
    if (event === "BeforeAgent") {
      // Judged before the CLI sends anything (its router's classifier goes first under auto), as
      // every model the prompt may reach: the first names the prompt, the others are checks.
      const { setting, models } = promptModels(typeof input.cwd === "string" ? input.cwd : undefined, ctx.env)
      ctx.state.write(name, sessionId, { ...before, judged: models, setting }, ctx.env)
      const [first, ...rest] = models
      const prompt = { type: "user-prompt", session_id: sessionId, metadata: compact({ cwd: input.cwd, model: first, ...promptFields(input.prompt, ctx.settings) }), idempotency_key: newKey() }
      return { signals: [prompt, ...rest.map((m) => modelCheck(sessionId, m, input.cwd, setting))] }
    }
    if (event === "BeforeModel") {
      // The model a call goes to after routing or a switch the settings do not show: a model the
      // prompt was not judged for is judged before its call.
      const model = typeof input.llm_request?.model === "string" ? input.llm_request.model : undefined
      const judged = Array.isArray(before.judged) ? before.judged : []
      ctx.state.write(name, sessionId, { ...before, ...(model ? { model, judged: [...new Set([...judged, model])] } : {}) }, ctx.env)
      return { signals: model && !judged.includes(model) ? [modelCheck(sessionId, model, input.cwd, before.setting)] : [] }
    }
    /** @type {string | undefined} */
    let type
    /** @type {Record<string, unknown>} */
    let metadata = { cwd: input.cwd }
    const state = before
    if (event === "BeforeTool" || event === "AfterTool") {
      type = event === "BeforeTool" ? "pre-tool" : "post-tool"
      metadata = { ...metadata, ...toolFields(input.tool_name, input.tool_input, mcpServer(input)) }
      if (input.original_request_name) metadata.original_tool_name = input.original_request_name
      if (event === "AfterTool") metadata = { ...metadata, ...toolError(input.tool_response) }
    } else if (event === "AfterAgent") {
      type = "stop"
    } else if (event === "SessionStart") {
      type = "session-start"
      metadata = { ...metadata, source: input.source }
    } else if (event === "SessionEnd") {
      type = "session-end"
      metadata = { ...metadata, reason: input.reason }
    }
    if (!type) return { signals: [] }
    // A verdict asked before something runs carries no usage (pre-tool is judged, not counted):
    // what the transcript gained waits for the next event.
    if (type === "pre-tool") {
      return { signals: [{ type, session_id: sessionId, metadata: compact({ model: state.model, ...metadata }), idempotency_key: newKey() }] }
    }
    // The usage the transcript gained rides on the event's own signal; a second model in the same
    // stretch gets a token-milestone of its own, so every model is priced as itself.
    const read = newUsage(input, state)
    ctx.state.write(name, sessionId, read.state, ctx.env)
    const [main, ...others] = read.usage
    const extra = others.map((u) => ({
      type: "token-milestone",
      session_id: sessionId,
      metadata: compact({ ...usageMetadata(u), cwd: input.cwd }),
      idempotency_key: keyFor(name, sessionId, `usage:${read.ids.join(",")}:${u.model}`)
    }))
    const own = compact({ model: state.model, ...metadata, ...(main ? usageMetadata(main) : {}) })
    return { signals: [...extra, { type, session_id: sessionId, metadata: own, idempotency_key: newKey() }] }
  },
  reply: (decision, input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    if (decision.kind === "allow") return { exitCode: 0 }
    const message = decision.message ?? ""
    if (decision.kind === "block") {
      // The turn ends here: nothing is sent to the model ("Agent execution stopped: <reason>").
      if (event === "BeforeModel" || event === "BeforeAgent") return { exitCode: 0, stdout: JSON.stringify({ continue: false, stopReason: message, reason: message }) }
      // The tool does not run; the model gets the reason as the tool's error.
      if (event === "BeforeTool") return { exitCode: 0, stdout: JSON.stringify({ decision: "deny", reason: message }) }
    }
    // A warning, or a block where nothing is left to stop: the interactive UI shows systemMessage,
    // and a headless run (-p) prints it on stderr ("Hook system message: …").
    return { exitCode: 0, stdout: JSON.stringify({ systemMessage: `signal-engine: ${message}` }) }
  }
}
