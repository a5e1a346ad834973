// @ts-check
import { closeSync, openSync, readSync, statSync } from "../builtins.js"
import { homedir } from "node:os"
import { join } from "node:path"
import { newKey } from "../client.js"
import { compact, isOurs, keyFor, promptFields, toolFields, usageFields } from "./common.js"
import { canReachStderr, tellUser, toolAncestor } from "./terminal.js"
import { readNewLines, rememberIds } from "./transcript.js"

/**
 * GitHub Copilot CLI. Hooks live in JSON files of their own: `$COPILOT_HOME/hooks/*.json` (user,
 * `~/.copilot/hooks` by default) or `.github/hooks/*.json` (repository), shaped
 * `{ version: 1, hooks: { event: [ { type: "command", bash, timeoutSec } ] } }`. Ours is
 * `signal-engine.json`. The input is camelCase (`sessionId`, `cwd`, `toolName`, `toolArgs`) and
 * names no event, so the event comes from the installed command line. No model or tokens in any
 * input: the session's event log (`$COPILOT_HOME/session-state/<sessionId>/events.jsonl`) has a
 * `session.usage_record` per model call (`inputTokens` counts every input token, cache reads and
 * writes included) and the model in `session.start` (`selectedModel`) and `session.model_change`.
 * A prompt is refused with `{decision:"block", reason}` (exit 2 does not block it), a tool call
 * with `{permissionDecision:"deny", permissionDecisionReason}`.
 */
const name = "copilot-cli"

export const fileName = "signal-engine.json"

const events = [
  "sessionStart",
  "userPromptSubmitted",
  "preToolUse",
  "postToolUse",
  "postToolUseFailure",
  "preCompact",
  "agentStop",
  "sessionEnd"
]

const types = /** @type {Record<string, string>} */ ({
  sessionStart: "session-start",
  userPromptSubmitted: "user-prompt",
  preToolUse: "pre-tool",
  postToolUse: "post-tool",
  postToolUseFailure: "post-tool",
  preCompact: "pre-compact",
  agentStop: "stop",
  sessionEnd: "session-end"
})

/** Copilot also accepts PascalCase event names (with Claude-style snake_case input): one name for both. */
const eventName = (/** @type {string} */ event) =>
  (event ? event[0]?.toLowerCase() + event.slice(1) : event)
    .replace(/^userPromptSubmit$/, "userPromptSubmitted")
    .replace(/^stop$/, "agentStop")

const copilotHome = (/** @type {NodeJS.ProcessEnv} */ env) => env.COPILOT_HOME || join(env.HOME || homedir(), ".copilot")

const hookCommand = (/** @type {any} */ h) => h?.bash ?? h?.command ?? h?.powershell

/** The hook entries of one event, without ours. */
const others = (/** @type {unknown} */ entries) => (Array.isArray(entries) ? entries.filter((h) => !isOurs(hookCommand(h))) : [])

/**
 * The model calls the session's event log gained since the last hook, once per event id, summed
 * per model; the model the session runs, from its start or a switch.
 */
const newUsage = (/** @type {string} */ path, /** @type {Record<string, any>} */ state) => {
  const { lines, offset } = readNewLines(path, Number(state.offset ?? 0))
  const seen = new Set(state.ids ?? [])
  /** @type {Map<string, { model?: string, input: number, output: number, cacheRead: number, cacheWrite: number }>} */
  const byModel = new Map()
  /** @type {string[]} */
  const ids = []
  let model = state.model
  for (const line of lines) {
    const data = line?.data
    if (line?.type === "session.start" && typeof data?.selectedModel === "string") model = data.selectedModel
    if (line?.type === "session.model_change" && typeof data?.newModel === "string") model = data.newModel
    if (line?.type !== "session.usage_record" || !data?.usage || typeof line.id !== "string" || seen.has(line.id)) continue
    const u = data.usage
    const m = typeof u.model === "string" ? u.model : model
    model = m ?? model
    ids.push(line.id)
    const cacheRead = Number(u.cacheReadTokens ?? 0)
    const cacheWrite = Number(u.cacheWriteTokens ?? 0)
    const sum = byModel.get(m) ?? { model: m, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    sum.input += Math.max(0, Number(u.inputTokens ?? 0) - cacheRead - cacheWrite)
    sum.output += Number(u.outputTokens ?? 0)
    sum.cacheRead += cacheRead
    sum.cacheWrite += cacheWrite
    byModel.set(m, sum)
  }
  return { usage: [...byModel.values()], ids, model, state: { ...state, offset, model, ids: rememberIds(state.ids, ids) } }
}

/** How long a settle waits for Copilot to finish writing its event log. */
const settleWithinMs = 30_000

/** Whether Copilot has written the log's last record (`session.shutdown`, as it exits). */
const shutDown = (/** @type {string} */ path) => {
  try {
    const size = statSync(path).size
    const fd = openSync(path, "r")
    try {
      const length = Math.min(size, 256 * 1024)
      const buf = Buffer.alloc(length)
      readSync(fd, buf, 0, length, size - length)
      return buf.toString("utf8").includes("\"type\":\"session.shutdown\"")
    } finally {
      closeSync(fd)
    }
  } catch {
    return false
  }
}

/** A headless `copilot -p …` (or `--prompt`) process, by its command line. */
const isCopilotPrompt = (/** @type {string[]} */ args) =>
  args.slice(0, 2).some((a) => /(^|\/)copilot(-[\w-]+)?(\.js)?$/.test(a)) && args.some((a) => a === "-p" || a === "--prompt" || a.startsWith("--prompt="))

/** Events whose warning also goes to the agent (Copilot shows hooks' output on no screen of its own). */
const contextEvents = new Set(["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "postToolUseFailure"])

/** @type {import("../hook.js").Tool} */
export const copilotCli = {
  name,
  title: "Copilot CLI",
  configPath: ({ project, cwd, env }) => (project ? join(cwd, ".github", "hooks", fileName) : join(copilotHome(env), "hooks", fileName)),
  install: (config, command) => {
    const rest = copilotCli.uninstall(config)
    /** @type {Record<string, unknown[]>} */
    const hooks = { ...(rest.hooks ?? {}) }
    for (const event of events) hooks[event] = [...others(hooks[event]), { type: "command", bash: command(event), timeoutSec: 30 }]
    return { ...rest, version: 1, hooks }
  },
  uninstall: (config) => {
    if (!config || typeof config !== "object") return {}
    /** @type {Record<string, unknown>} */
    const hooks = {}
    for (const [event, entries] of Object.entries(config.hooks ?? {})) {
      const kept = Array.isArray(entries) ? others(entries) : entries
      if (!Array.isArray(kept) || kept.length > 0) hooks[event] = kept
    }
    const { hooks: _hooks, version, ...rest } = config
    // Our file with nothing but our hooks left is empty: the CLI then removes it.
    if (Object.keys(hooks).length === 0) return rest
    return { ...rest, version: version ?? 1, hooks }
  },
  check: (config) => {
    const problems = []
    if (config?.version !== 1) problems.push(`version is ${JSON.stringify(config?.version)}, Copilot CLI reads version 1`)
    for (const event of events) {
      if (!(config?.hooks?.[event] ?? []).some((/** @type {any} */ h) => isOurs(hookCommand(h)))) problems.push(`no ${event} hook`)
    }
    return problems
  },
  // Copilot has no on-screen channel for a hook's warning: the adapter reaches a -p run's stderr
  // (Linux), but writes nothing over the interactive screen.
  unseen: () => [
    "an interactive copilot session shows a hook's warning (fail open, a refused key, a warn verdict) to the agent only; blocks are shown",
    ...(canReachStderr() ? [] : ["copilot -p shows no hook warning on this system either (no /proc to reach its stderr)"])
  ],
  plan: (input, ctx) => {
    const event = eventName(String(input.hook_event_name ?? ctx.event))
    const type = types[event]
    const sessionId = String(input.sessionId ?? input.session_id ?? "unknown")
    if (!type) return { signals: [] }
    const cwd = input.cwd ?? input.workingDirectory
    const before = ctx.state.read(name, sessionId, ctx.env)
    const transcript = input.transcriptPath ?? input.transcript_path ?? before.transcript ??
      join(copilotHome(ctx.env), "session-state", sessionId, "events.jsonl")
    const read = newUsage(transcript, before)
    const model = read.model ?? ctx.env.COPILOT_MODEL
    ctx.state.write(name, sessionId, { ...read.state, transcript, ...(model ? { model } : {}) }, ctx.env)
    /** @type {Record<string, unknown>} */
    let metadata = { model, cwd }
    if (type === "user-prompt") metadata = { ...metadata, ...promptFields(input.prompt, ctx.settings) }
    if (type === "pre-tool" || type === "post-tool") {
      metadata = { ...metadata, ...toolFields(input.toolName ?? input.tool_name, input.toolArgs ?? input.tool_input) }
    }
    if (event === "postToolUse") metadata = { ...metadata, ...toolError(input.toolResult) }
    if (event === "postToolUseFailure") metadata = { ...metadata, error: String(input.error ?? "tool failed").slice(0, 500) }
    if (type === "session-start") metadata = { ...metadata, source: input.source }
    if (type === "session-end") metadata = { ...metadata, reason: input.reason, ...(input.error ? { error: String(input.error).slice(0, 500) } : {}) }
    if (type === "stop") metadata = { ...metadata, reason: input.stopReason }
    if (type === "pre-compact") metadata = { ...metadata, trigger: input.trigger }
    // The usage the log gained rides on the event's own signal; another model in the same stretch
    // gets a token-milestone of its own, so each is priced as itself. A pre-tool signal is judged,
    // not counted: there all of it goes as token-milestones, keyed by the log's event ids so a
    // second read never counts it twice.
    const main = type === "pre-tool" ? undefined : read.usage[0]
    const rest = type === "pre-tool" ? read.usage : read.usage.slice(1)
    const extra = rest.map((u) => ({
      type: "token-milestone",
      session_id: sessionId,
      metadata: compact({ ...usageFields(u), cwd }),
      idempotency_key: keyFor(name, sessionId, `usage:${read.ids.join(",")}:${u.model}`)
    }))
    const own = compact({ ...metadata, ...(main ? usageFields(main) : {}) })
    const signals = [...extra, { type, session_id: sessionId, metadata: own, idempotency_key: newKey() }]
    if (type !== "session-end") return { signals }
    // Copilot writes its event log in bursts, the last one as it exits, after this hook: the
    // session ends once that is written and counted (settle), so no usage comes after its end.
    ctx.state.write(name, sessionId, { ...ctx.state.read(name, sessionId, ctx.env), ending: signals }, ctx.env)
    return { signals: [], settle: sessionId }
  },
  settle: async (sessionId, ctx) => {
    const transcriptOf = (/** @type {Record<string, any>} */ state) =>
      state.transcript ?? join(copilotHome(ctx.env), "session-state", sessionId, "events.jsonl")
    const deadline = Date.now() + settleWithinMs
    while (!shutDown(transcriptOf(ctx.state.read(name, sessionId, ctx.env))) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
    }
    const state = ctx.state.read(name, sessionId, ctx.env)
    const read = newUsage(transcriptOf(state), state)
    const { ending, ...rest } = /** @type {Record<string, any>} */ (read.state)
    ctx.state.write(name, sessionId, rest, ctx.env)
    const usage = read.usage.map((u) => ({
      type: "token-milestone",
      session_id: sessionId,
      metadata: usageFields(u),
      idempotency_key: keyFor(name, sessionId, `usage:${read.ids.join(",")}:${u.model}`)
    }))
    return { signals: [...usage, ...(Array.isArray(ending) ? ending : [])] }
  },
  reply: (decision, input, ctx) => {
    const event = eventName(String(input.hook_event_name ?? ctx.event))
    if (decision.kind === "allow") return { exitCode: 0 }
    const message = decision.message ?? ""
    if (decision.kind === "block") {
      if (event === "userPromptSubmitted") return { exitCode: 0, stdout: JSON.stringify({ decision: "block", reason: message }) }
      if (event === "preToolUse") return { exitCode: 0, stdout: JSON.stringify({ permissionDecision: "deny", permissionDecisionReason: message }) }
    }
    // A warning, or a block where nothing is left to stop. Copilot shows no hook output in a -p
    // run: the user is told on Copilot's own stderr, the agent in its context (and can say so).
    const copilot = toolAncestor(isCopilotPrompt)
    if (copilot) tellUser(copilot.pid, message, { tool: name, sessionId: String(input.sessionId ?? input.session_id ?? "unknown"), ctx })
    if (contextEvents.has(event)) return { exitCode: 0, stdout: JSON.stringify({ additionalContext: `[signal-engine] ${message}` }), stderr: message }
    return { exitCode: 0, stderr: message }
  }
}

const toolError = (/** @type {any} */ result) =>
  result && typeof result === "object" && result.resultType && result.resultType !== "success"
    ? { error: String(result.error ?? result.textResultForLlm ?? result.resultType).slice(0, 500) }
    : {}
