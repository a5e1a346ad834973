// @ts-check
import { closeSync, openSync, readFileSync, writeSync } from "../builtins.js"
import { hookParentPid } from "../hook-context.js"
import { homedir } from "node:os"
import { join } from "node:path"
import { newKey } from "../client.js"
import { compact, keyFor, promptFields, toolFields, usageFields } from "./common.js"
import { claudeStyleBlock, claudeStyleEvents, claudeStyleHook, claudeStyleTypes, installHooks, missingHooks, uninstallHooks } from "./hooks-settings.js"
import { readNewLines } from "./transcript.js"

/**
 * Codex CLI (`@openai/codex`). Hooks live in `$CODEX_HOME/hooks.json` (CODEX_HOME defaults to
 * ~/.codex), or in a repository's `.codex/hooks.json` (loaded only once the project is trusted),
 * in the Claude Code shape. Hooks are on by default since Codex 0.124 (`[features] hooks`); Codex
 * runs a new or changed hook only once it is trusted (`/hooks` in the TUI), or for one invocation
 * with `--dangerously-bypass-hook-trust`.
 *
 * Every event's input has `session_id`, `transcript_path` (the rollout file), `cwd`,
 * `hook_event_name` and, except SessionEnd, `model`; tool events have `tool_name` ("Bash" for the
 * shell), `tool_input` (`{command}`), `tool_use_id`, PostToolUse `tool_response`.
 * Token counts are only in the rollout (see `newUsage`).
 */
const name = "codex"

const events = claudeStyleEvents(Object.keys(claudeStyleTypes).filter((e) => e !== "PostToolUseFailure"))

/** Codex clamps a SessionEnd hook to 3 s (and warns about a longer one); the others get 30 s. */
const timeouts = /** @type {Record<string, number>} */ ({ SessionEnd: 3 })
const defaultTimeout = 30

/**
 * @typedef {{ input: number, cached: number, cacheWrite: number, output: number }} Totals
 *   a session's cumulative usage as Codex keeps it: `input` counts every input token, cached
 *   ones included (`cached` and `cacheWrite` are parts of it); `output` includes reasoning.
 */

const totalsOf = (/** @type {any} */ u) =>
  u && typeof u === "object" && Number.isFinite(Number(u.input_tokens))
    ? /** @type {Totals} */ ({
      input: Number(u.input_tokens ?? 0),
      cached: Number(u.cached_input_tokens ?? 0),
      cacheWrite: Number(u.cache_write_input_tokens ?? 0),
      output: Number(u.output_tokens ?? 0)
    })
    : undefined

/**
 * Whether Codex's own telemetry goes to the service (`[otel]` in config.toml: an OTLP exporter's
 * endpoint under `<url>/engine/v1/otlp`): the service then counts every model request from it, and
 * the hooks send no usage, which would count them twice.
 */
const telemetryToService = (/** @type {NodeJS.ProcessEnv} */ env, /** @type {string | undefined} */ url) => {
  if (!url) return false
  let config = ""
  try {
    config = readFileSync(join(env.CODEX_HOME || join(env.HOME || homedir(), ".codex"), "config.toml"), "utf8")
  } catch {
    return false
  }
  const otel = config.split(/^\s*\[/m).find((section) => /^otel[\].]/.test(section))
  if (otel === undefined) return false
  const base = `${url.replace(/\/+$/, "")}/engine/v1/otlp`
  return [...otel.matchAll(/endpoint\s*=\s*"([^"]*)"/g)].some((m) => m[1] === base || m[1]?.startsWith(`${base}/`))
}

/**
 * The usage the rollout gained since the last hook. Codex writes each model call's usage twice:
 * a `token_usage_record` line (with `thread_token_usage`, newer versions) and an `event_msg` of
 * type `token_count` (with `info.total_token_usage` and `info.last_token_usage`). Both carry the
 * session's running total, so the new usage is the difference between the running total now and
 * the one already reported (kept in the session's state): a model call seen in both lines, or in
 * a stretch two hooks read, counts once, whichever lines a version writes. A total that goes down
 * (a rewritten file) becomes the new baseline without being counted. Each difference is priced
 * with the model of the turn it happened in (`turn_context` lines).
 */
const newUsage = (/** @type {any} */ input, /** @type {Record<string, any>} */ state) => {
  const { lines, offset } = readNewLines(input.transcript_path ?? undefined, Number(state.offset ?? 0))
  /** @type {Totals} */
  let reported = state.totals ?? { input: 0, cached: 0, cacheWrite: 0, output: 0 }
  let model = state.model ?? input.model
  let exec = state.exec
  /** @type {Map<string, { model?: string, input: number, output: number, cacheRead: number, cacheWrite: number }>} */
  const byModel = new Map()
  for (const line of lines) {
    const p = line?.payload
    if (line?.type === "session_meta" && p) exec = p.source === "exec" || p.originator === "codex_exec"
    if (line?.type === "turn_context" && typeof p?.model === "string") model = p.model
    const totals = line?.type === "token_usage_record" ?
      totalsOf(p?.thread_token_usage)
      : line?.type === "event_msg" && p?.type === "token_count" ?
      totalsOf(p?.info?.total_token_usage)
      : undefined
    if (!totals) continue
    if (totals.input < reported.input || totals.output < reported.output) {
      reported = totals
      continue
    }
    const d = {
      input: totals.input - reported.input,
      cached: Math.max(0, totals.cached - reported.cached),
      cacheWrite: Math.max(0, totals.cacheWrite - reported.cacheWrite),
      output: totals.output - reported.output
    }
    reported = totals
    if (d.input === 0 && d.output === 0) continue
    const sum = byModel.get(model) ?? { model, input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }
    sum.input += Math.max(0, d.input - d.cached - d.cacheWrite)
    sum.cacheRead += d.cached
    sum.cacheWrite += d.cacheWrite
    sum.output += d.output
    byModel.set(model, sum)
  }
  return { usage: [...byModel.values()], model, state: { ...state, offset, model, totals: reported, ...(exec === undefined ? {} : { exec }) } }
}

/** The Codex process that runs this hook (its ancestor named codex*), through /proc; undefined where there is none. */
const codexPid = () => {
  try {
    let pid = hookParentPid()
    for (let depth = 0; depth < 4 && pid > 1; depth++) {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"))
      if (comm.startsWith("codex")) return pid
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    }
  } catch {
    // No /proc (macOS), or the process is gone.
  }
  return undefined
}

/**
 * `codex exec` prints a hook's outcome as "hook: UserPromptSubmit Blocked" and nothing of its
 * reason or system message (the TUI shows them). So in an exec session the message is also
 * written where Codex writes its own progress: its standard error, reached through /proc (the
 * hook's own stderr is a pipe Codex reads, and hooks run in a session of their own, without a
 * terminal). Where there is no /proc (macOS) only the TUI shows it.
 */
const tellExecUser = (/** @type {string} */ message) => {
  const pid = codexPid()
  if (pid === undefined) return
  try {
    const fd = openSync(`/proc/${pid}/fd/2`, "a")
    try {
      writeSync(fd, `${message}\n`)
    } finally {
      closeSync(fd)
    }
  } catch {
    // Codex's stderr is gone: the JSON answer still carries the message.
  }
}

const alive = (/** @type {number} */ pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** How long a settle waits for Codex to exit (it exports its last telemetry as it does). */
const settleWithinMs = 30_000

/** @type {import("../hook.js").Tool} */
export const codex = {
  name,
  title: "Codex CLI",
  configPath: ({ project, cwd, env }) =>
    project ? join(cwd, ".codex", "hooks.json") : join(env.CODEX_HOME || join(env.HOME || homedir(), ".codex"), "hooks.json"),
  install: (config, command) => {
    const next = installHooks(config, events, command, { timeout: defaultTimeout })
    for (const [event, seconds] of Object.entries(timeouts)) {
      for (const group of next.hooks[event] ?? []) {
        for (const h of group.hooks ?? []) if (h.command === command(event)) h.timeout = seconds
      }
    }
    return next
  },
  uninstall: uninstallHooks,
  check: (config) => missingHooks(config, events),
  notes: [
    "Codex runs a new or changed hook only once you trust it: open codex and review the hooks with /hooks",
    "(one-off automation can pass --dangerously-bypass-hook-trust to codex exec; a project's .codex/hooks.json loads only in a trusted project)"
  ],
  plan: (input, ctx) => {
    const hook = claudeStyleHook(name, input, ctx)
    if (!hook) return { signals: [] }
    const { event, type, sessionId, before } = hook
    // Before a tool runs the rollout is not read: a pre-tool signal is judged, never counted, and
    // what the model call that asked for the tool used is counted by the PostToolUse that follows.
    const read = type === "pre-tool" || telemetryToService(ctx.env, ctx.settings.url)
      ? { usage: [], model: before.model ?? input.model, state: before }
      : newUsage(input, before)
    const model = input.model ?? read.model
    /** @type {Record<string, any>} */
    const state = { ...read.state, ...(model ? { model } : {}) }
    ctx.state.write(name, sessionId, state, ctx.env)
    /** @type {Record<string, unknown>} */
    let metadata = { model, cwd: input.cwd }
    if (type === "user-prompt") metadata = { ...metadata, ...promptFields(input.prompt, ctx.settings), turn_id: input.turn_id }
    if (type === "pre-tool" || type === "post-tool") {
      metadata = { ...metadata, ...toolFields(input.tool_name, input.tool_input), tool_use_id: input.tool_use_id }
    }
    if (type === "post-tool") metadata = { ...metadata, ...toolError(input.tool_response) }
    if (type === "session-start") metadata = { ...metadata, source: input.source }
    if (type === "session-end") metadata = { ...metadata, reason: input.reason }
    if (type === "pre-compact") metadata = { ...metadata, trigger: input.trigger }
    // The usage rides on the event's own signal; a second model in the same stretch (a model
    // switched mid-session) gets a token-milestone signal of its own, priced as itself.
    const [main, ...others] = read.usage
    const extra = others.map((u) => ({
      type: "token-milestone",
      session_id: sessionId,
      metadata: compact({ ...usageFields(u), cwd: input.cwd }),
      idempotency_key: keyFor(name, sessionId, `usage:${state.totals?.input}:${state.totals?.output}:${u.model}`)
    }))
    const own = compact({ ...metadata, ...(main ? usageFields(main) : {}) })
    const signals = [...extra, { type, session_id: sessionId, metadata: own, idempotency_key: newKey() }]
    // With its telemetry going to the service, Codex exports the session's usage as it exits,
    // after this hook: the session ends once Codex is gone (settle), so that usage lands in it.
    if (type === "session-end" && telemetryToService(ctx.env, ctx.settings.url)) {
      const pid = codexPid()
      if (pid !== undefined) {
        ctx.state.write(name, sessionId, { ...state, ending: signals[signals.length - 1], pid }, ctx.env)
        return { signals: extra, settle: sessionId }
      }
    }
    // Codex kills a SessionEnd hook after its 3 s: give up on the service a second earlier, so
    // the signals are spooled rather than lost with the process.
    const cap = timeouts[event]
    return cap === undefined ? { signals } : { signals, timeoutMs: (cap - 1) * 1000 }
  },
  settle: async (sessionId, ctx) => {
    const { pid, ending, ...rest } = ctx.state.read(name, sessionId, ctx.env)
    const deadline = Date.now() + settleWithinMs
    while (typeof pid === "number" && alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    ctx.state.write(name, sessionId, rest, ctx.env)
    return { signals: ending ? [ending] : [] }
  },
  reply: (decision, input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    if (decision.kind === "allow") return { exitCode: 0 }
    const message = decision.message || "signal-engine policy"
    const sessionId = typeof input.session_id === "string" ? input.session_id : undefined
    if (sessionId && ctx.state.read(name, sessionId, ctx.env).exec === true) {
      tellExecUser(`signal-engine: ${decision.kind === "block" ? "blocked" : "warning"}: ${message}`)
    }
    // A denied tool call: Codex tells the model "Command blocked by PreToolUse hook: <reason>".
    const blocked = decision.kind === "block" ? claudeStyleBlock(event, message) : undefined
    if (blocked) return blocked
    // A warning, or a block where nothing is left to stop (a block on Stop would make Codex go on
    // with the reason as a new prompt). SessionEnd's output is not read at all.
    if (event === "SessionEnd") return { exitCode: 0 }
    return { exitCode: 0, stdout: JSON.stringify({ systemMessage: message }) }
  }
}

const toolError = (/** @type {any} */ response) =>
  response && typeof response === "object" && (response.is_error === true || response.error)
    ? { error: String(response.error ?? "tool error").slice(0, 500) }
    : {}
