// @ts-check
import { sendSignals } from "./client.js"
import { driftWarning, rememberDrift } from "./goals.js"
import { hookCwd } from "./hook-context.js"
import { loadSettings, projectIdFor } from "./settings.js"
import { inBackground, spool, spooledFiles } from "./spool.js"
import { sessionState } from "./state.js"

/**
 * @typedef {import("./client.js").Signal} Signal
 * @typedef {import("./settings.js").Settings} Settings
 *
 * @typedef {object} Plan  what one hook event sends
 * @property {Signal[]} signals  in order; the event's own signal last (usage read from the tool's record may come first)
 * @property {string} [settle]  a session id: run the tool's `settle` for it in the background (for
 *   what the tool writes only after its last hook, e.g. as it exits)
 * @property {number} [timeoutMs]  the most this event may wait for the service, where the tool
 *   gives its hook less time than the settings' timeout (what a killed hook had not spooled is lost)
 *
 * @typedef {object} Decision  what the tool is told (`redact` never reaches a tool's reply: runHook
 *   rewrites the tool's input where it can, else blocks; secrets/rewrite.js)
 * @property {"allow" | "warn" | "block" | "redact"} kind
 * @property {string} [message]  the rule's message (warn, block), or why no verdict could be had
 *
 * @typedef {object} Reply  how the hook answers the tool
 * @property {string} [stdout]
 * @property {string} [stderr]
 * @property {number} exitCode
 *
 * @typedef {object} HookContext
 * @property {Settings} settings
 * @property {string} event  the hook event, as installed (`hook <tool> <event>`), when the input does not name it
 * @property {NodeJS.ProcessEnv} env
 * @property {typeof sessionState} state  per-session state (offsets into the tool's own records)
 *
 * @typedef {object} Tool
 * @property {string} name  the `adapter` of every signal
 * @property {string} title
 * @property {(o: { project: boolean, cwd: string, env: NodeJS.ProcessEnv }) => string} configPath
 * @property {(config: any, command: (event: string) => string, target?: { project: boolean, env: NodeJS.ProcessEnv }) => any} install  the config with
 *   the hooks added (idempotent); `command(event)` is what the tool runs for that event; `target`: a repository's config or the user's
 * @property {(config: any) => any} uninstall  the config with exactly the hooks `install` adds taken out
 * @property {(config: any) => string[]} check  what is wrong with the installed hooks, a line each
 * @property {(input: any, ctx: HookContext) => Plan | Promise<Plan>} plan
 * @property {(decision: Decision, input: any, ctx: HookContext) => Reply} reply
 * @property {string[]} [notes]  what the user must still do in the tool after install, a line each
 * @property {() => string[]} [unseen]  where on this machine the tool shows the user no warning of
 *   a hook's (fail open, a refused key, a `warn` verdict), a line each, for `doctor`
 * @property {(sessionId: string, ctx: HookContext) => Promise<Plan>} [settle]  the signals that
 *   become known only after the session's last hook (run detached, see Plan.settle)
 */

export const productName = "signal-engine"

/** The verdicts of one event's signals, as one decision: any block wins, then any warning. */
export const decide = (
  /** @type {import("./client.js").Outcome} */ outcome,
  /** @type {Settings} */ settings
) => {
  // A block judged from the signal alone holds though the service could not record the signal.
  if (outcome.kind === "unreachable" && outcome.blocked) return outcome.blocked.action === "redact" ? redactOf(outcome.blocked) : blockOf(outcome.blocked)
  if (outcome.kind === "unreachable") return noVerdict(settings, `${productName} unreachable (${outcome.reason})`)
  if (outcome.kind === "rejected") {
    return noVerdict(settings, `${productName} refused the signal: ${outcome.status} ${outcome.code}${outcome.error ? `: ${outcome.error}` : ""}`)
  }
  const results = outcome.results
  const blocked = results.find((r) => r.ok === false && !r.error && r.action !== "redact")
  if (blocked) return blockOf(blocked)
  const redacted = results.find((r) => r.ok === false && !r.error && r.action === "redact")
  if (redacted) return redactOf(redacted)
  const pending = results.find((r) => r.action === "pending")
  if (pending) return noVerdict(settings, `${productName} has no verdict yet (pending${pending.reason ? `: ${pending.reason}` : ""})`)
  const warned = results.find((r) => r.action === "warn")
  const drift = driftWarning(results)
  if (warned || drift) {
    const rule = warned ? warned.message ?? `Warning from ${productName} policy${warned.rule_id ? ` (${warned.rule_id})` : ""}` : undefined
    return /** @type {Decision} */ ({ kind: "warn", message: [rule, drift].filter(Boolean).join("\n") })
  }
  return /** @type {Decision} */ ({ kind: "allow" })
}

const blockOf = (/** @type {import("./client.js").Result} */ r) => /** @type {Decision} */ ({
  kind: "block",
  message: r.message ?? `Blocked by ${productName} policy${r.rule_id ? ` (${r.rule_id})` : ""}`
})

const redactOf = (/** @type {import("./client.js").Result} */ r) => /** @type {Decision} */ ({
  kind: "redact",
  message: r.message ?? `Secrets taken out by ${productName} policy${r.rule_id ? ` (${r.rule_id})` : ""}`
})

/** No verdict: the fail mode decides, and the user sees why either way. */
const noVerdict = (/** @type {Settings} */ settings, /** @type {string} */ why) => /** @type {Decision} */ (settings.fail_mode === "closed"
  ? { kind: "block", message: `${why}; blocked because the adapter fails closed` }
  : { kind: "warn", message: `${why}; allowed because the adapter fails open` })

/**
 * Runs one hook event: reads the tool's JSON from stdin, sends its signals, answers the tool.
 * Never throws: a broken hook must not break the tool (the fail mode says what a failure means).
 */
export const runHook = async (
  /** @type {Tool} */ tool,
  /** @type {string} */ event,
  /** @type {string} */ stdin,
  env = process.env
) => {
  const settings = loadSettings(env)
  /** @type {HookContext} */
  const ctx = { settings, event, env, state: sessionState }
  let input
  try {
    input = stdin.trim() === "" ? {} : JSON.parse(stdin)
  } catch {
    return tool.reply(noVerdict(settings, `${productName}: the hook input was not JSON`), {}, ctx)
  }
  try {
    if (!settings.url || !settings.license_key) {
      return tool.reply(noVerdict(settings, `${productName} is not configured (run signal-engine-adapter install)`), input, ctx)
    }
    const plan = await tool.plan(input, ctx)
    // Secrets are found (and taken out) before anything is sent; the scanner loads only for the
    // events that carry content.
    /** @type {{ kind: string, secret: string }[]} */
    let found = []
    if (plan.signals.some((s) => s.type === "user-prompt" || s.type === "pre-tool" || s.type === "post-tool")) {
      found = await (await import("./secrets/findings.js")).applySecrets(plan, input, ctx)
    }
    if (plan.settle) await inBackground(["settle", tool.name, plan.settle], env)
    if (plan.signals.length === 0) return tool.reply({ kind: "allow" }, input, ctx)
    const outcome = await deliver(tool, plan, input, settings, env)
    if (outcome.kind === "answered") rememberDrift(tool.name, plan.signals, outcome.results, env)
    const decision = decide(outcome, settings)
    if (decision.kind !== "redact") return tool.reply(decision, input, ctx)
    const { redactAsBlock, rewriteReply } = await import("./secrets/rewrite.js")
    const message = decision.message ?? ""
    return rewriteReply(tool.name, String(input.hook_event_name ?? event), input, found, message) ??
      tool.reply(redactAsBlock(message, tool.title, String(input.hook_event_name ?? event)), input, ctx)
  } catch (e) {
    return tool.reply(noVerdict(settings, `${productName} adapter failed: ${e instanceof Error ? e.message : String(e)}`), input, ctx)
  }
}

/**
 * Sends a plan's signals: what gets no answer goes to the spool, and an answer from the service
 * is the moment to drain what waits there (in the background).
 */
const deliver = async (
  /** @type {Tool} */ tool,
  /** @type {Plan} */ plan,
  /** @type {any} */ input,
  /** @type {Settings} */ settings,
  /** @type {NodeJS.ProcessEnv} */ env
) => {
  const projectId = projectIdFor(typeof input.cwd === "string" ? input.cwd : hookCwd(), settings)
  for (const s of plan.signals) s.adapter = tool.name // required by the engine (spec §2.5)
  if (projectId) { for (const s of plan.signals) s.metadata = { project_id: projectId, ...s.metadata } }
  const target = { url: /** @type {string} */ (settings.url), license_key: /** @type {string} */ (settings.license_key) }
  const outcome = await sendSignals(target, plan.signals, Math.min(settings.timeout_ms, plan.timeoutMs ?? Infinity))
  if (outcome.kind === "unreachable") spool(plan.signals, env)
  else if (spooledFiles(env).length > 0) await inBackground(["flush", "--quiet"], env)
  return outcome
}

/** What a tool records only after its last hook: sent by a detached `settle`, spooled if need be. */
export const runSettle = async (/** @type {Tool} */ tool, /** @type {string} */ sessionId, env = process.env) => {
  const settings = loadSettings(env)
  if (!tool.settle || !settings.url || !settings.license_key) return
  const plan = await tool.settle(sessionId, { settings, event: "settle", env, state: sessionState })
  if (plan.signals.length > 0) await deliver(tool, plan, {}, settings, env)
}
