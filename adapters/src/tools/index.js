// @ts-check
import { claudeCode } from "./claude-code.js"
import { codex } from "./codex.js"
import { copilotCli } from "./copilot-cli.js"
import { cursor } from "./cursor.js"
import { geminiCli } from "./gemini-cli.js"

/** @type {ReadonlyArray<import("../hook.js").Tool>} */
export const tools = [claudeCode, codex, geminiCli, copilotCli, cursor]

/** A tool by its adapter name, or one of the short names people type. */
export const toolNamed = (/** @type {string} */ name) => {
  const aliases = /** @type {Record<string, string>} */ ({ claude: "claude-code", gemini: "gemini-cli", copilot: "copilot-cli" })
  const wanted = aliases[name] ?? name
  return tools.find((t) => t.name === wanted)
}
