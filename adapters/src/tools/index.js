// @ts-check

/**
 * The tools, each loaded only when asked for: a hook runs one tool's mapping, and every module
 * it does not load is start-up time the tool does not wait for.
 * @type {Record<string, () => Promise<import("../hook.js").Tool>>}
 */
const loaders = {
  "claude-code": async () => (await import("./claude-code.js")).claudeCode,
  codex: async () => (await import("./codex.js")).codex,
  "gemini-cli": async () => (await import("./gemini-cli.js")).geminiCli,
  "copilot-cli": async () => (await import("./copilot-cli.js")).copilotCli,
  cursor: async () => (await import("./cursor.js")).cursor
}

export const toolNames = Object.keys(loaders)

const aliases = /** @type {Record<string, string>} */ ({ claude: "claude-code", gemini: "gemini-cli", copilot: "copilot-cli" })

/** A tool by its adapter name, or one of the short names people type; undefined for others. */
export const toolNamed = async (/** @type {string} */ name) => {
  const load = loaders[aliases[name] ?? name]
  return load ? load() : undefined
}
