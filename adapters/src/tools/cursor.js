// @ts-check
import { homedir } from "node:os"
import { join } from "node:path"
import { newKey } from "../client.js"
import { compact, isOurs, promptFields, toolFields } from "./common.js"

/**
 * Cursor's hooks (`hooks.json`, version 1): one list of `{ command }` per event, no matchers.
 * Every event's input carries `conversation_id` (the session), `generation_id`, `hook_event_name`,
 * `workspace_roots` and, in recent versions, `model`. Cursor reports no token counts to hooks, so
 * its sessions count signals, verdicts and tool calls but no usage.
 */
const name = "cursor"

const events = [
  "beforeSubmitPrompt",
  "beforeShellExecution",
  "beforeMCPExecution",
  "afterShellExecution",
  "afterMCPExecution",
  "afterFileEdit",
  "stop"
]

/** The MCP server a call goes to: its name where Cursor gives one, else its URL or command. */
const mcpServer = (/** @type {any} */ input) => input.server_name ?? input.server ?? input.url ?? input.command

const durationOf = (/** @type {any} */ input) => (typeof input.duration === "number" ? input.duration : undefined)

const metadataFor = (/** @type {string} */ event, /** @type {any} */ input, /** @type {import("../settings.js").Settings} */ settings) => {
  const base = { model: input.model, cwd: input.cwd ?? input.workspace_roots?.[0], generation_id: input.generation_id }
  switch (event) {
    case "beforeSubmitPrompt":
      return { type: "user-prompt", metadata: { ...base, ...promptFields(input.prompt, settings) } }
    case "beforeShellExecution":
      return { type: "pre-tool", metadata: { ...base, ...toolFields("Shell", { command: input.command }) } }
    case "afterShellExecution":
      return { type: "post-tool", metadata: { ...base, ...toolFields("Shell", { command: input.command }), duration_ms: durationOf(input) } }
    case "beforeMCPExecution":
      return { type: "pre-tool", metadata: { ...base, ...toolFields(input.tool_name, input.tool_input, mcpServer(input)) } }
    case "afterMCPExecution":
      return { type: "post-tool", metadata: { ...base, ...toolFields(input.tool_name, input.tool_input, mcpServer(input)), duration_ms: durationOf(input) } }
    case "afterFileEdit":
      return {
        type: "post-tool",
        metadata: { ...base, tool_name: "Edit", file_path: input.file_path, edits: Array.isArray(input.edits) ? input.edits.length : undefined }
      }
    case "stop":
      return { type: "stop", metadata: { ...base, status: input.status, error: input.status === "error" ? "the agent loop ended with an error" : undefined } }
    default:
      return undefined
  }
}

/** @type {import("../hook.js").Tool} */
export const cursor = {
  name,
  title: "Cursor",
  configPath: ({ project, cwd, env }) => (project ? join(cwd, ".cursor", "hooks.json") : join(env.HOME || homedir(), ".cursor", "hooks.json")),
  install: (config, command) => {
    const next = cursor.uninstall(config)
    const hooks = { ...(next.hooks ?? {}) }
    for (const event of events) hooks[event] = [...(hooks[event] ?? []), { command: command(event) }]
    return { ...next, version: next.version ?? 1, hooks }
  },
  uninstall: (config) => {
    if (!config || typeof config !== "object") return {}
    /** @type {Record<string, unknown>} */
    const hooks = {}
    for (const [event, list] of Object.entries(config.hooks ?? {})) {
      const kept = Array.isArray(list) ? list.filter((h) => !isOurs(h?.command)) : list
      if (!Array.isArray(kept) || kept.length > 0) hooks[event] = kept
    }
    const { hooks: _old, version, ...rest } = config
    if (Object.keys(hooks).length > 0) return { ...rest, version, hooks }
    // Only the version left: the file held nothing but our hooks.
    return Object.keys(rest).length > 0 ? { ...rest, version } : {}
  },
  check: (config) => {
    const problems = []
    if (config?.version !== 1) problems.push(`version is ${JSON.stringify(config?.version)}, Cursor reads version 1`)
    for (const event of events) {
      if (!(config?.hooks?.[event] ?? []).some((/** @type {any} */ h) => isOurs(h?.command))) problems.push(`no ${event} hook`)
    }
    return problems
  },
  plan: (input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    const mapped = metadataFor(event, input, ctx.settings)
    if (!mapped) return { signals: [] }
    const sessionId = String(input.conversation_id ?? "unknown")
    return { signals: [{ type: mapped.type, session_id: sessionId, metadata: compact(mapped.metadata), idempotency_key: newKey() }] }
  },
  reply: (decision, input, ctx) => {
    const event = String(input.hook_event_name ?? ctx.event)
    const message = decision.message
    const json = (/** @type {unknown} */ o) => ({ exitCode: 0, stdout: JSON.stringify(o) })
    if (event === "beforeSubmitPrompt") {
      return json(decision.kind === "block" ? { continue: false, user_message: message } : compact({ continue: true, user_message: message }))
    }
    if (event === "beforeShellExecution" || event === "beforeMCPExecution") {
      return json(
        decision.kind === "block"
          ? { permission: "deny", user_message: message, agent_message: `Blocked by policy: ${message}` }
          : compact({ permission: "allow", user_message: message })
      )
    }
    // After the fact nothing can be stopped; Cursor shows nothing from these hooks, so a warning
    // or block goes to the hook's log (stderr) for the Hooks output channel.
    return { exitCode: 0, stdout: "{}", ...(message ? { stderr: message } : {}) }
  }
}
