// @ts-check
import { builtin, readFileSync, readlinkSync } from "../builtins.js"
import { homedir } from "node:os"
import { isAbsolute, join } from "node:path"
import { argsOf, flagValue } from "./terminal.js"

/**
 * Which model a Claude Code session sends its next prompt to. Hooks are not told in print mode
 * (`claude -p`: no `model` in SessionStart, and the transcript is empty until the first prompt has
 * gone), so where neither says it, Claude Code itself is asked (`askClaude`).
 */

/** Claude Code's own names for "whichever model is current": not a model a rule or a price knows. */
const aliases = /^(default|best|sonnet|opus|haiku|fable|opusplan)(\[.*\])?$/i

/** A configured model as the API will see it ("claude-sonnet-4-5[1m]" asks for the 1M context of claude-sonnet-4-5). */
export const modelName = (/** @type {unknown} */ value) =>
  typeof value === "string" && value.trim() !== "" && !aliases.test(value.trim()) ? value.trim().replace(/\[.*\]$/, "") : undefined

export const userConfigDir = (/** @type {NodeJS.ProcessEnv} */ env) => env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude")

const settingsModel = (/** @type {string} */ path) => {
  try {
    return modelName(JSON.parse(readFileSync(path, "utf8"))?.model)
  } catch {
    return undefined
  }
}

/**
 * The model ANTHROPIC_MODEL or the `model` of the local, project and user settings name, in Claude
 * Code's own order (a full ID only; an alias needs Claude Code to resolve it).
 */
export const configuredModel = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env) => {
  const fromEnv = modelName(env.ANTHROPIC_MODEL)
  if (fromEnv) return fromEnv
  const project = env.CLAUDE_PROJECT_DIR || cwd
  const files = [
    ...(project ? [join(project, ".claude", "settings.local.json"), join(project, ".claude", "settings.json")] : []),
    join(userConfigDir(env), "settings.json")
  ]
  for (const file of files) {
    const model = settingsModel(file)
    if (model) return model
  }
  return undefined
}

/** The flags of a `claude` command line that choose the model, with their values. */
const modelFlags = ["--model", "--agent", "--agents", "--settings", "--setting-sources"]

/**
 * The Claude Code process of this hook (CLAUDE_PID, which it sets for hooks): its executable, its
 * folder, whether it prints (-p) and in which format, and the flags it was started with that
 * choose a model; `argv` and `flags` are undefined where its command line cannot be read.
 */
export const claudeProcess = (/** @type {NodeJS.ProcessEnv} */ env) => {
  const pid = Number(env.CLAUDE_PID)
  const argv = argsOf(pid) ?? psArgs(pid)
  let exe
  try {
    exe = readlinkSync(`/proc/${pid}/exe`)
  } catch {
    exe = undefined
  }
  /** @type {Record<string, string> | undefined} */
  let flags
  if (argv) {
    flags = {}
    for (const name of modelFlags) {
      const value = flagValue(argv, name)
      if (value !== undefined) flags[name] = value
    }
  }
  let cwd
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`)
  } catch {
    cwd = undefined
  }
  const print = argv ? argv.slice(1).some((a) => a === "-p" || a === "--print") : undefined
  return { pid, exe, argv, flags, cwd, print, outputFormat: argv ? flagValue(argv, "--output-format") ?? "text" : undefined }
}

/**
 * A command line as `ps` shows it, where there is no /proc (macOS): split at spaces, which is
 * enough for the model flags (a model name has none; a --settings JSON with spaces is lost).
 */
const psArgs = (/** @type {number} */ pid) => {
  if (process.platform === "linux" || process.platform === "win32" || !Number.isInteger(pid) || pid <= 1) return undefined
  try {
    // Loaded here, through require: a hook that never gets here does not pay for the module.
    const { execFileSync } = /** @type {typeof import("node:child_process")} */ (builtin("node:child_process"))
    return execFileSync("ps", ["-o", "args=", "-p", String(pid)], { encoding: "utf8", timeout: 2000 }).trim().split(/\s+/)
  } catch {
    return undefined
  }
}

/** `--settings` as given (a JSON text or a file) with every hook turned off, so asking runs none of them, ours included. */
const settingsWithoutHooks = (/** @type {string | undefined} */ given, /** @type {string | undefined} */ cwd) => {
  let settings = {}
  if (given !== undefined) {
    try {
      const text = given.trim().startsWith("{") ? given : readFileSync(isAbsolute(given) || !cwd ? given : join(cwd, given), "utf8")
      settings = JSON.parse(text) ?? {}
    } catch {
      settings = {}
    }
  }
  return JSON.stringify({ ...settings, disableAllHooks: true })
}

export const probeEnv = "SIGNAL_ENGINE_MODEL_PROBE"

/**
 * Asks Claude Code which model the session runs: `claude -p /model` is a local command (no model
 * request, nothing kept: --no-session-persistence), and the `init` line of its stream-json output
 * names the model by ID, resolved from the built-in default, the settings, ANTHROPIC_MODEL and
 * the flags passed here exactly as the session resolved it. `flags` are the session's own
 * (from its command line), `extra` what stands for a switch made since.
 * @returns {Promise<{ model: string | undefined, name: string | undefined }>}  the model's ID and
 *   the name Claude Code shows for it ("Current model: `Fable 5.2`")
 */
export const askClaude = async (
  /** @type {NodeJS.ProcessEnv} */ env,
  /** @type {ReturnType<typeof claudeProcess>} */ claude,
  /** @type {string | undefined} */ cwd,
  /** @type {Record<string, string>} */ extra = {},
  timeoutMs = 10_000
) => {
  const { spawn } = await import("node:child_process")
  const { "--settings": settings, ...flags } = { ...claude.flags, ...extra }
  const args = [
    "-p",
    "/model",
    "--output-format",
    "stream-json",
    "--verbose",
    "--no-session-persistence",
    ...Object.entries(flags).flatMap(([k, v]) => [k, v]),
    "--settings",
    settingsWithoutHooks(settings, claude.cwd)
  ]
  const none = { model: undefined, name: undefined }
  return new Promise((resolve) => {
    let out = ""
    let child
    try {
      child = spawn(claude.exe ?? "claude", args, { cwd: cwd ?? claude.cwd, env: { ...env, [probeEnv]: "1" }, stdio: ["ignore", "pipe", "ignore"] })
    } catch {
      resolve(none)
      return
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.stdout.on("data", (c) => (out += c))
    child.on("error", () => resolve(none))
    child.on("close", () => {
      clearTimeout(timer)
      let model
      let name
      for (const line of out.split("\n")) {
        try {
          const l = JSON.parse(line)
          if (l?.type === "system" && l.subtype === "init") model = modelName(l.model)
          if (l?.type === "result" && typeof l.result === "string") name = /Current model: `([^`(]+?)\s*(\(|`)/.exec(l.result)?.[1]
        } catch {
          // not a JSON line
        }
      }
      resolve({ model, name })
    })
  })
}

/**
 * The arguments of a `/model` switch ("" for the picker) where a transcript line records one: as a
 * user message naming the command, in print mode and interactive sessions alike.
 */
export const modelSwitchOf = (/** @type {any} */ line) => {
  if (line?.type !== "user") return undefined
  const content = line.message?.content
  const text = typeof content === "string" ? content : Array.isArray(content) ? content.map((c) => c?.text ?? "").join("") : ""
  if (!text.includes("<command-name>/model</command-name>")) return undefined
  return (/<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1] ?? "").trim()
}

/** The text of a transcript line (a message's, or a local command's output). */
const lineText = (/** @type {any} */ line) => {
  const content = line?.message?.content ?? line?.content
  return typeof content === "string" ? content : Array.isArray(content) ? content.map((c) => c?.text ?? "").join("") : ""
}

/** Whether a transcript line is a local command's output (the picker's answer among them). */
export const isCommandOutput = (/** @type {any} */ line) => lineText(line).includes("<local-command-stdout>")

/**
 * The model's name in the picker's answer when it was chosen for this session only ("Set model to
 * `Fable 5.2` for this session only"): not saved anywhere else, so only this line says it.
 */
export const sessionOnlyPickOf = (/** @type {any} */ line) => /<local-command-stdout>Set model to `([^`]+)` for this session only/.exec(lineText(line))?.[1]
