// @ts-check
/** Pieces every tool's mapping uses: bounded metadata, tool names, MCP servers, keys. */

export const marker = "signal-engine-adapter"

/** Whether a configured hook command is one of ours (so uninstall takes out exactly those). */
export const isOurs = (/** @type {unknown} */ command) => typeof command === "string" && command.includes(marker)

/** Text cut to `max` characters: tool inputs can be whole files, and metadata is bounded by the service. */
export const clip = (/** @type {unknown} */ value, max = 2000) => {
  if (value === undefined || value === null) return undefined
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** Shell tools by the names the tools give them: their input's command is what org policies match. */
const shellTools = new Set(["bash", "shell", "run_shell_command", "shell_command", "exec_command", "local_shell", "terminal", "powershell"])

export const isShellTool = (/** @type {string | undefined} */ name) => name !== undefined && shellTools.has(name.toLowerCase())

/** The shell command in a tool's input, if it runs one (`command` as a string or an argv array). */
export const commandOf = (/** @type {string | undefined} */ toolName, /** @type {any} */ input) => {
  if (input === null || typeof input !== "object") return isShellTool(toolName) && typeof input === "string" ? input : undefined
  const c = input.command ?? input.cmd
  if (typeof c === "string") return c
  if (Array.isArray(c) && c.every((x) => typeof x === "string")) return c.join(" ")
  return undefined
}

/** The MCP server of a tool named the way the tools name MCP tools (`mcp__server__tool`, `server/tool`). */
export const mcpServerOf = (/** @type {string | undefined} */ toolName) => {
  if (!toolName) return undefined
  const m = /^mcp__(.+?)__/.exec(toolName)
  return m ? m[1] : undefined
}

/** Metadata without the keys whose value is undefined (JSON would drop them anyway; tests compare). */
export const compact = (/** @type {Record<string, unknown>} */ o) => {
  /** @type {Record<string, unknown>} */
  const r = {}
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== "") r[k] = v
  return r
}

/** The tool-call fields of a pre-tool or post-tool signal's metadata. */
export const toolFields = (/** @type {string | undefined} */ toolName, /** @type {unknown} */ toolInput, mcpServer = mcpServerOf(toolName)) =>
  compact({
    tool_name: toolName,
    command: clip(commandOf(toolName, toolInput), 4000),
    mcp_server: mcpServer,
    tool_input: clip(toolInput)
  })

/** The prompt's text only when the settings say so (drift needs it); its length always. */
export const promptFields = (/** @type {unknown} */ prompt, /** @type {import("../settings.js").Settings} */ settings) =>
  typeof prompt !== "string" ? {} : compact({ prompt: settings.send_prompts ? clip(prompt, 8000) : undefined, prompt_chars: prompt.length })

/**
 * A key for a signal that stands for one thing in the tool's record (a model call's usage, say),
 * so reading that record twice never counts it twice; the rest get a fresh UUID.
 */
export const keyFor = (/** @type {string} */ tool, /** @type {string} */ sessionId, /** @type {string} */ what) => {
  const key = `${tool}:${sessionId}:${what}`
  return key.length <= 255 ? key.replace(/[^\x21-\x7e]/g, "_") : `${tool}:${sessionId.slice(0, 80)}:${hash(what)}`
}

const hash = (/** @type {string} */ s) => {
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0
  return h.toString(16)
}

/**
 * Usage of several model calls as signal metadata: tokens_in counts every input token, cache reads
 * and writes included (the service's convention), with the cache parts named.
 * @param {{ model?: string, input: number, output: number, cacheRead: number, cacheWrite: number }} u
 */
export const usageFields = (u) =>
  compact({
    model: u.model,
    tokens_in: u.input + u.cacheRead + u.cacheWrite,
    tokens_out: u.output,
    cache_read_tokens: u.cacheRead || undefined,
    cache_write_tokens: u.cacheWrite || undefined
  })
