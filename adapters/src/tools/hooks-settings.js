// @ts-check
import { isOurs } from "./common.js"

/**
 * The signal type of each event of Claude Code's hook protocol, which Codex follows (without
 * PostToolUseFailure, which only Claude Code fires).
 */
export const claudeStyleTypes = /** @type {Record<string, string>} */ ({
  SessionStart: "session-start",
  UserPromptSubmit: "user-prompt",
  PreToolUse: "pre-tool",
  PostToolUse: "post-tool",
  PostToolUseFailure: "post-tool",
  PreCompact: "pre-compact",
  Stop: "stop",
  SessionEnd: "session-end"
})

/** The events to install, tool events with the match-all matcher. */
export const claudeStyleEvents = (/** @type {ReadonlyArray<string>} */ names) =>
  names.map((event) => (claudeStyleTypes[event] === "pre-tool" || claudeStyleTypes[event] === "post-tool" ? { event, matcher: "*" } : { event }))

/**
 * What a Claude-style hook's input names: its event (or, when it does not say, the event the hook
 * was installed for), the event's signal type, its session, and what `tool` kept for that session;
 * undefined for an event that makes no signal.
 */
export const claudeStyleHook = (
  /** @type {string} */ tool,
  /** @type {any} */ input,
  /** @type {import("../hook.js").HookContext} */ ctx
) => {
  const event = String(input.hook_event_name ?? ctx.event)
  const type = claudeStyleTypes[event]
  if (!type) return undefined
  const sessionId = String(input.session_id ?? "unknown")
  return { event, type, sessionId, before: ctx.state.read(tool, sessionId, ctx.env) }
}

/**
 * A block as Claude Code's protocol (and Codex's) takes it, where there is something to stop: the
 * prompt, the tool call, or (after a tool ran) the model told why; undefined elsewhere.
 * @returns {import("../hook.js").Reply | undefined}
 */
export const claudeStyleBlock = (/** @type {string} */ event, /** @type {string} */ message) => {
  if (event === "UserPromptSubmit" || event === "PostToolUse") return { exitCode: 0, stdout: JSON.stringify({ decision: "block", reason: message }) }
  if (event === "PreToolUse") {
    const output = { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: message }
    return { exitCode: 0, stdout: JSON.stringify({ hookSpecificOutput: output }) }
  }
  return undefined
}

/**
 * The hooks shape Claude Code introduced and Codex and Gemini CLI share:
 * `{ hooks: { Event: [ { matcher?, hooks: [ { type: "command", command, timeout? } ] } ] } }`.
 * Install appends one group of ours per event (after taking out any earlier one, so it is
 * idempotent) and leaves every other hook and setting as it was.
 */
export const installHooks = (
  /** @type {any} */ config,
  /** @type {ReadonlyArray<{ event: string, matcher?: string }>} */ events,
  /** @type {(event: string) => string} */ command,
  /** @type {Record<string, unknown>} */ extra = {}
) => {
  const next = uninstallHooks(config)
  const hooks = { ...(next.hooks ?? {}) }
  for (const { event, matcher } of events) {
    const group = { ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: "command", command: command(event), ...extra }] }
    hooks[event] = [...(hooks[event] ?? []), group]
  }
  return { ...next, hooks }
}

export const uninstallHooks = (/** @type {any} */ config) => {
  if (!config || typeof config !== "object" || !config.hooks || typeof config.hooks !== "object") return { ...config }
  /** @type {Record<string, unknown>} */
  const hooks = {}
  for (const [event, groups] of Object.entries(config.hooks)) {
    if (!Array.isArray(groups)) {
      hooks[event] = groups
      continue
    }
    const kept = groups
      .map((g) => (g && Array.isArray(g.hooks) ? { ...g, hooks: g.hooks.filter((/** @type {any} */ h) => !isOurs(h?.command)) } : g))
      .filter((g) => !(g && Array.isArray(g.hooks) && g.hooks.length === 0))
    if (kept.length > 0) hooks[event] = kept
  }
  const { hooks: _old, ...rest } = config
  return Object.keys(hooks).length > 0 ? { ...rest, hooks } : rest
}

/** Events that lack our hook. */
export const missingHooks = (/** @type {any} */ config, /** @type {ReadonlyArray<{ event: string }>} */ events) =>
  events
    .filter(({ event }) => !(config?.hooks?.[event] ?? []).some((/** @type {any} */ g) => (g?.hooks ?? []).some((/** @type {any} */ h) => isOurs(h?.command))))
    .map(({ event }) => `no ${event} hook`)
