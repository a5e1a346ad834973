// @ts-check
import { statSync } from "../builtins.js"
import { join } from "node:path"
import { homedir } from "node:os"
import { newKey } from "../client.js"
import { compact, keyFor, promptFields, toolFields } from "./common.js"
import { geminiProcess, isAuto, promptModels } from "./gemini-model.js"
import { installTelemetry, ourOutfile, readRecords, startReading, telemetryFile, telemetryToService, uninstallTelemetry } from "./gemini-usage.js"
import { installHooks, missingHooks, uninstallHooks } from "./hooks-settings.js"
import { readNewLines, rememberIds } from "./transcript.js"

/**
 * Gemini CLI (`@google/gemini-cli`): command hooks in settings.json (`~/.gemini/settings.json`,
 * `.gemini/settings.json` in a project), enabled by default (`hooksConfig.enabled`). Every hook
 * gets `session_id`, `transcript_path`, `cwd`, `hook_event_name`, `timestamp` on stdin and answers
 * with JSON on stdout (exit 0), or exit 2 with the reason on stderr (a block).
 *
 * - BeforeAgent (`prompt`) → `user-prompt`, judged before the CLI sends anything. It names no
 *   model: the model comes from a `/model` switch (only the telemetry shows it), else the CLI's
 *   flag, variable or settings (gemini-model.js). Under "auto" the prompt goes to a classifier
 *   model and then to Pro or Flash, so it is judged as each, and as every model auto was seen to
 *   use (the others as token-free `token-milestone` checks). A block is `continue: false` ("Agent
 *   execution stopped: <reason>"). BeforeModel judges a model the turn was not judged for before
 *   its call.
 * - BeforeTool (`tool_name`, `tool_input`, `mcp_context`) → `pre-tool`; a block is
 *   `decision: "deny"` (the tool does not run; the reason goes to the model as the tool's error).
 * - AfterTool (`tool_response` with `llmContent`, `returnDisplay`, `error`) → `post-tool`.
 * - AfterAgent → `stop`; SessionStart (`source`) → `session-start`; SessionEnd (`reason`) →
 *   `session-end`, sent once the CLI has exited and its last calls are counted (settle).
 * - Tokens: every model call, helpers' included, from the CLI's telemetry file (gemini-usage.js;
 *   install points user-level telemetry there). Without one, the main loop's calls from the
 *   transcript (a `gemini` message's `model` and `tokens`, counted once by id). AfterModel is not
 *   used: it sees the main loop only, once per streamed chunk, without cached tokens.
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

/** How long a settle waits for the CLI to exit (it writes its last telemetry as it does). */
const settleWithinMs = 30_000

/** @typedef {{ model?: string, input: number, output: number, cacheRead: number }} Usage */

/** A record of the models auto was seen to use, per auto setting, kept beside the sessions' state. */
const routedRecord = "auto-routing"

/**
 * Remembers the models auto used (the router's and those it picked: they differ by account and
 * rollout), so every later auto prompt is judged as them too, in any session.
 */
const rememberRouted = (/** @type {import("../hook.js").HookContext} */ ctx, /** @type {unknown} */ setting, /** @type {Usage[]} */ usage) => {
  if (typeof setting !== "string" || !isAuto(setting)) return
  const record = ctx.state.read(name, routedRecord, ctx.env)
  const known = Array.isArray(record[setting]) ? record[setting] : []
  const seen = usage.map((u) => u.model).filter((m) => typeof m === "string" && !known.includes(m))
  if (seen.length > 0) ctx.state.write(name, routedRecord, { ...record, [setting]: [...known, ...new Set(seen)] }, ctx.env)
}

/**
 * The model calls the session's record gained since the last read, summed per model, with the ids
 * counted (each call once): the telemetry file where the session has one, else the transcript.
 * @returns {{ usage: Usage[], ids: string[], state: Record<string, any> }}
 */
const newUsage = (/** @type {any} */ input, /** @type {Record<string, any>} */ state, /** @type {string} */ sessionId) => {
  const seen = new Set(state.ids ?? [])
  /** @type {Array<{ id: string } & Usage>} */
  const calls = []
  let next
  if (state.viaOtlp) {
    // The CLI's telemetry reaches the service itself (OTLP ingest), every call with it: counting
    // the transcript's main-loop calls too would count them twice.
    next = state
  } else if (state.telemetry) {
    const read = readRecords(state.telemetry, sessionId)
    calls.push(...read.calls)
    next = { ...state, telemetry: read.cursor }
  } else {
    const path = typeof input.transcript_path === "string" ? input.transcript_path : state.transcript
    const { lines, offset } = readNewLines(path, Number(state.offset ?? 0))
    for (const m of lines) {
      if (m?.type !== "gemini" || typeof m.id !== "string" || !m.tokens) continue
      const t = m.tokens
      // promptTokenCount already counts the cached tokens; the tool-use prompt is input too, and
      // thinking is billed as output.
      const input = Number(t.input ?? 0) + Number(t.tool ?? 0)
      calls.push({
        id: m.id,
        model: typeof m.model === "string" ? m.model : state.model,
        input,
        output: Number(t.output ?? 0) + Number(t.thoughts ?? 0),
        cacheRead: Number(t.cached ?? 0)
      })
    }
    next = { ...state, offset, ...(path ? { transcript: path } : {}) }
  }
  /** @type {Map<string | undefined, Usage>} */
  const byModel = new Map()
  /** @type {string[]} */
  const ids = []
  for (const c of calls) {
    // The CLI appends a transcript message again when it changes: the first, complete one counts.
    if (seen.has(c.id)) continue
    seen.add(c.id)
    ids.push(c.id)
    const sum = byModel.get(c.model) ?? { model: c.model, input: 0, output: 0, cacheRead: 0 }
    sum.input += c.input
    sum.output += c.output
    sum.cacheRead += c.cacheRead
    byModel.set(c.model, sum)
  }
  return { usage: [...byModel.values()], ids, state: { ...next, ids: rememberIds(state.ids, ids) } }
}

const usageMetadata = (/** @type {Usage} */ u) =>
  compact({ model: u.model, tokens_in: u.input, tokens_out: u.output, cache_read_tokens: u.cacheRead || undefined })

/** Usage as token-milestones, keyed by the calls they count, so a second read never counts them twice. */
const milestones = (/** @type {string} */ sessionId, /** @type {Usage[]} */ usage, /** @type {string[]} */ ids, /** @type {unknown} */ cwd) =>
  usage.map((u) => ({
    type: "token-milestone",
    session_id: sessionId,
    metadata: compact({ ...usageMetadata(u), cwd }),
    idempotency_key: keyFor(name, sessionId, `usage:${ids.join(",")}:${u.model}`)
  }))

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

/**
 * Where the session's usage is read: its telemetry file from where it stood at the start, else
 * nowhere when its telemetry goes to the service over OTLP, else the transcript.
 */
const usageSource = (/** @type {any} */ input, /** @type {import("../hook.js").HookContext} */ ctx) => {
  const gemini = geminiProcess()
  const cwd = typeof input.cwd === "string" ? input.cwd : undefined
  const file = telemetryFile(cwd, ctx.env, gemini.argv)
  // null (kept in the state, unlike undefined): this session has no telemetry file.
  const start = file ? startReading(file) : null
  const viaOtlp = !start && telemetryToService(cwd, ctx.env, gemini.argv, ctx.settings.url)
  return { pid: gemini.pid, telemetry: start, ...(start ? { switches: start } : {}), ...(viaOtlp ? { viaOtlp } : {}) }
}

/** Gemini CLI names MCP tools `mcp_<server>_<tool>` and says the server in `mcp_context`. */
const mcpServer = (/** @type {any} */ input) => typeof input.mcp_context?.server_name === "string" ? input.mcp_context.server_name : undefined

const toolError = (/** @type {any} */ response) =>
  response && typeof response === "object" && response.error
    ? { error: String(typeof response.error === "object" ? response.error.message ?? JSON.stringify(response.error) : response.error).slice(0, 500) }
    : {}

const configDir = (/** @type {NodeJS.ProcessEnv} */ env) => join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini")

const sizeOf = (/** @type {string} */ path) => {
  try {
    return statSync(path).size
  } catch {
    return -1
  }
}

const alive = (/** @type {number | undefined} */ pid) => {
  if (!pid) return false
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** @type {import("../hook.js").Tool} */
export const geminiCli = {
  name,
  title: "Gemini CLI",
  configPath: ({ project, cwd, env }) => (project ? join(cwd, ".gemini", "settings.json") : join(configDir(env), "settings.json")),
  // User-level telemetry goes to a file beside the settings; a repository's settings name no
  // one's home, so --project leaves telemetry to each user's own settings.
  install: (config, command, target) => {
    const hooked = installHooks(uninstallTelemetry(config), events, command, { name: "signal-engine", timeout: hookTimeoutMs })
    return target?.project ? hooked : installTelemetry(hooked, ourOutfile(target?.env ?? process.env))
  },
  uninstall: (config) => uninstallTelemetry(uninstallHooks(config)),
  check: (config) => [
    ...missingHooks(config, events),
    ...(config?.hooksConfig?.enabled === false ? ["hooks are disabled (hooksConfig.enabled is false)"] : []),
    // Only what undid install's telemetry: a user's own collector or a repository's settings are not faults.
    ...(config?.signalEngineAdapter && !(config.telemetry?.enabled === true && config.telemetry.outfile)
      ? ["telemetry no longer goes to a file: the CLI's helper model calls (router, checks) are not counted; run install again"]
      : [])
  ],
  plan: (input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    const sessionId = String(input.session_id ?? ctx.env.GEMINI_SESSION_ID ?? "unknown")
    let before = ctx.state.read(name, sessionId, ctx.env)
    // Chosen once per session: a cursor set again would skip what the file gained meanwhile.
    if (!("telemetry" in before)) before = { ...before, ...usageSource(input, ctx) }
    if (event === "BeforeAgent") {
      // Judged before the CLI sends anything (its router's classifier goes first under auto), as
      // every model the prompt may reach: the first names the prompt, the others are checks.
      // A /model switch shows in the telemetry only; it overrides flag, variable and settings.
      const switched = before.telemetry ? readRecords(before.switches ?? before.telemetry, sessionId) : undefined
      const lastSwitch = switched?.switches.at(-1) ?? before.switched
      const { setting, models: named } = promptModels(typeof input.cwd === "string" ? input.cwd : undefined, ctx.env, lastSwitch)
      const routed = isAuto(setting) ? ctx.state.read(name, routedRecord, ctx.env)[setting] : undefined
      const models = Array.isArray(routed) ? [...new Set([...named, ...routed])] : named
      ctx.state.write(name, sessionId, {
        ...before,
        judged: models,
        setting,
        ...(switched ? { switches: switched.cursor } : {}),
        ...(lastSwitch ? { switched: lastSwitch } : {})
      }, ctx.env)
      const [first, ...rest] = models
      const prompt = {
        type: "user-prompt",
        session_id: sessionId,
        metadata: compact({ cwd: input.cwd, model: first, ...promptFields(input.prompt, ctx.settings) }),
        idempotency_key: newKey()
      }
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
    if (!type) {
      ctx.state.write(name, sessionId, before, ctx.env)
      return { signals: [] }
    }
    // A verdict asked before something runs carries no usage (pre-tool is judged, not counted):
    // what the record gained waits for the next event.
    if (type === "pre-tool") {
      ctx.state.write(name, sessionId, before, ctx.env)
      return { signals: [{ type, session_id: sessionId, metadata: compact({ model: before.model, ...metadata }), idempotency_key: newKey() }] }
    }
    // The CLI writes its last calls as it exits, after this hook: the session ends once those are
    // counted (settle), so no usage comes after its end.
    if (type === "session-end") {
      const ending = { type, session_id: sessionId, metadata: compact({ model: before.model, ...metadata }), idempotency_key: newKey() }
      ctx.state.write(name, sessionId, { ...before, ending, transcript: input.transcript_path ?? before.transcript }, ctx.env)
      return { signals: [], settle: sessionId }
    }
    // The usage the record gained rides on the event's own signal; other models get a
    // token-milestone each, so every model is priced as itself.
    const read = newUsage(input, before, sessionId)
    ctx.state.write(name, sessionId, read.state, ctx.env)
    rememberRouted(ctx, before.setting, read.usage)
    const [main, ...others] = read.usage
    const own = compact({ model: before.model, ...metadata, ...(main ? usageMetadata(main) : {}) })
    return { signals: [...milestones(sessionId, others, read.ids, input.cwd), { type, session_id: sessionId, metadata: own, idempotency_key: newKey() }] }
  },
  settle: async (sessionId, ctx) => {
    const deadline = Date.now() + settleWithinMs
    const pause = () => new Promise((r) => setTimeout(r, 100))
    const { pid, telemetry, ending } = ctx.state.read(name, sessionId, ctx.env)
    // A session ended by /clear or a logout goes on in the same process: only an exit is awaited.
    const exits = !["clear", "logout"].includes(ending?.metadata?.reason)
    if (pid && exits) { while (alive(pid) && Date.now() < deadline) await pause() }
    // Otherwise (or with no process to watch: no /proc), until its telemetry file has been still
    // for longer than the CLI's export interval (1 s).
    else if (telemetry) {
      for (let size = -1, still = 0; still < 20 && Date.now() < deadline; await pause()) {
        const now = sizeOf(telemetry.path)
        still = now === size ? still + 1 : 0
        size = now
      }
    }
    const state = ctx.state.read(name, sessionId, ctx.env)
    const read = newUsage({}, state, sessionId)
    const { ending: last, ...rest } = /** @type {Record<string, any>} */ (read.state)
    ctx.state.write(name, sessionId, rest, ctx.env)
    rememberRouted(ctx, state.setting, read.usage)
    return { signals: [...milestones(sessionId, read.usage, read.ids, undefined), ...(last ? [last] : [])] }
  },
  reply: (decision, input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    if (decision.kind === "allow") return { exitCode: 0 }
    const message = decision.message ?? ""
    if (decision.kind === "block") {
      // The turn ends here: nothing is sent to the model ("Agent execution stopped: <reason>").
      if (event === "BeforeModel" || event === "BeforeAgent") {
        return { exitCode: 0, stdout: JSON.stringify({ continue: false, stopReason: message, reason: message }) }
      }
      // The tool does not run; the model gets the reason as the tool's error.
      if (event === "BeforeTool") return { exitCode: 0, stdout: JSON.stringify({ decision: "deny", reason: message }) }
    }
    // A warning, or a block where nothing is left to stop: the interactive UI shows systemMessage,
    // and a headless run (-p) prints it on stderr ("Hook system message: …").
    return { exitCode: 0, stdout: JSON.stringify({ systemMessage: `signal-engine: ${message}` }) }
  }
}
