// @ts-check
import { readFileSync } from "../builtins.js"
import { hookParentPid } from "../hook-context.js"
import { homedir } from "node:os"
import { dirname, join } from "node:path"

/**
 * The model a Gemini CLI prompt will go to, found out before the CLI sends anything: BeforeAgent
 * names no model, and in "auto" mode the CLI's router sends the prompt to a classifier model
 * before the first BeforeModel. Gemini CLI's own precedence (0.61): `--model`/`-m`, then
 * GEMINI_MODEL, then `model.name` of the settings (system overrides > project > user > system
 * defaults), else "auto".
 */

/** The models each auto setting of 0.61 routes to: Pro first (what serves when routing fails), then Flash and the classifier's Flash-Lite. */
const autoModels = /** @type {Record<string, string[]>} */ ({
  auto: ["gemini-3.1-pro-preview", "gemini-3.8-flash", "gemini-3.5-flash-lite"],
  "auto-gemini-3": ["gemini-3.1-pro-preview", "gemini-3.8-flash", "gemini-3.5-flash-lite"],
  "auto-gemini-2.5": ["gemini-2.5-pro", "gemini-3.8-flash", "gemini-3.5-flash-lite"]
})

export const isAuto = (/** @type {string} */ setting) => Object.hasOwn(autoModels, setting)

/** The short names the CLI takes for one model, as 0.61 resolves them. */
const aliases = /** @type {Record<string, string>} */ ({
  pro: "gemini-3.1-pro-preview",
  flash: "gemini-3.8-flash",
  "flash-lite": "gemini-3.5-flash-lite",
  "gemini-3-pro-preview": "gemini-3.1-pro-preview"
})

/**
 * The models a prompt may reach, the one that serves it first: one model when the CLI is told one,
 * the router's classifier and every model it may pick under auto. `switched`: a model chosen in the
 * session (`/model`), over all the rest.
 * @returns {{ setting: string, models: string[] }}
 */
export const promptModels = (
  /** @type {string | undefined} */ cwd,
  /** @type {NodeJS.ProcessEnv} */ env,
  /** @type {string | undefined} */ switched = undefined
) => {
  const setting = switched ?? configuredModel(cwd, env)
  const auto = isAuto(setting) ? autoModels[setting] : undefined
  return { setting, models: auto ?? [(Object.hasOwn(aliases, setting) ? aliases[setting] : undefined) ?? setting] }
}

/** The model setting in force: the flag, the variable, the settings, in the CLI's order. */
export const configuredModel = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env) => {
  const flag = modelFlag(geminiProcess().argv)
  if (flag) return flag
  if (env.GEMINI_MODEL?.trim()) return env.GEMINI_MODEL.trim()
  return settingsModel(cwd, env) ?? "auto"
}

/** `model.name` of the settings files, the highest that sets it. */
const settingsModel = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env) => {
  const system = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || systemPath("settings.json")
  const defaults = env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(dirname(system), "system-defaults.json")
  const user = join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini", "settings.json")
  const project = cwd ? join(cwd, ".gemini", "settings.json") : undefined
  for (const path of [system, project, user, defaults]) {
    const name = path ? readModelName(path) : undefined
    if (name) return name
  }
  return undefined
}

const systemPath = (/** @type {string} */ file) =>
  process.platform === "darwin" ?
    join("/Library/Application Support/GeminiCli", file)
    : process.platform === "win32" ?
    join("C:\\ProgramData\\gemini-cli", file)
    : join("/etc/gemini-cli", file)

const readModelName = (/** @type {string} */ path) => {
  try {
    const name = JSON.parse(readFileSync(path, "utf8"))?.model?.name
    return typeof name === "string" && name.trim() ? name.trim() : undefined
  } catch {
    return undefined
  }
}

/** The value of the last `-m`/`--model` before `--` (yargs keeps the last). */
export const modelFlag = (/** @type {string[]} */ argv) => {
  let model
  for (let i = 0; i < argv.length; i++) {
    const arg = /** @type {string} */ (argv[i])
    if (arg === "--") break
    const inline = /^(?:--model|-m)=(.*)$/s.exec(arg)
    if (inline) model = inline[1]
    else if (arg === "--model" || arg === "-m") model = argv[++i]
  }
  return model?.trim() || undefined
}

/**
 * The gemini process that runs this hook and its arguments (Linux: /proc), found among the hook's
 * ancestors (the CLI starts hooks through a shell, and may have relaunched itself); no arguments
 * where there is no /proc.
 * @returns {{ pid?: number, argv: string[] }}
 */
export const geminiProcess = () => {
  let pid = hookParentPid()
  for (let depth = 0; depth < 6 && pid > 1; depth++) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((a) => a !== "")
      const script = argv.findIndex((a, i) => i > 0 && /(^|[\\/])gemini(\.js)?$|@google[\\/]gemini-cli[\\/]/.test(a))
      if (script > 0) return { pid, argv: argv.slice(script + 1) }
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    } catch {
      return { argv: [] }
    }
  }
  return { argv: [] }
}
