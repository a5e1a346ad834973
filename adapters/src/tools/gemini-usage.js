// @ts-check
import { closeSync, fstatSync, openSync, readFileSync, readSync, renameSync, statSync } from "../builtins.js"
import { homedir } from "node:os"
import { dirname, isAbsolute, join, resolve } from "node:path"

/**
 * Every model call Gemini CLI makes, from its own telemetry written to a local file (the
 * documented `telemetry: { enabled, target: "local", outfile }`): a `gemini_cli.api_response` log
 * record per call, the main loop's and the helpers' alike (the router's classifier, next-speaker
 * and loop checks, summaries, compression, sub-agents), with the model that served it and its
 * tokens. Hooks see only the main loop's calls (BeforeModel/AfterModel), and the transcript holds
 * only those. The file holds every session of the user, each record tagged with its `session.id`.
 */

/** Where install points the telemetry: beside the settings, so the folder exists whenever they do. */
export const ourOutfile = (/** @type {NodeJS.ProcessEnv} */ env) => join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini", "signal-engine-telemetry.log")

/** Past this size a session start moves the file aside (one generation kept), so it does not grow forever. */
const rotateAtBytes = 32 * 1024 * 1024

/** The key under which install keeps the user's own `telemetry` setting, for uninstall to put back. */
const savedKey = "signalEngineAdapter"

/**
 * The settings with telemetry written to our file, unless the user sends it somewhere already (an
 * OTLP collector, Google Cloud, a file of their own: an outfile would override the first two, and
 * their own file is read as it is). Prompts are kept out of it.
 */
export const installTelemetry = (/** @type {any} */ config, /** @type {string} */ outfile) => {
  const rest = uninstallTelemetry(config)
  const own = rest.telemetry
  if (own && (own.outfile || own.otlpEndpoint || own.target === "gcp" || own.useCollector)) return rest
  const telemetry = { ...(own ?? {}), enabled: true, target: "local", outfile, logPrompts: false }
  return { ...rest, telemetry, [savedKey]: { telemetry: own ?? null } }
}

/** The settings with the user's own telemetry setting back, as before install. */
export const uninstallTelemetry = (/** @type {any} */ config) => {
  if (!config || typeof config !== "object" || !(savedKey in config)) return { ...config }
  const { [savedKey]: saved, telemetry: _ours, ...rest } = config
  return saved?.telemetry ? { ...rest, telemetry: saved.telemetry } : rest
}

/**
 * The session's telemetry setting as the CLI resolves it: flags, then GEMINI_TELEMETRY_*
 * variables, then the settings, system over project over user.
 */
const telemetrySetting = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env, /** @type {string[]} */ argv) => {
  const settings = mergedTelemetry(cwd, env)
  /** A flag's last value before `--`: `--name v`, `--name=v`; `--name`/`--no-name` for a switch. */
  const flag = (/** @type {string} */ name, switchFlag = false) => {
    let value
    for (let i = 0; i < argv.length && argv[i] !== "--"; i++) {
      const arg = /** @type {string} */ (argv[i])
      if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3)
      else if (arg === `--${name}`) value = switchFlag ? "true" : argv[++i]
      else if (switchFlag && arg === `--no-${name}`) value = "false"
    }
    return value
  }
  const bool = (/** @type {string | undefined} */ v) => (v === undefined ? undefined : v === "true" || v === "1")
  const enabled = bool(flag("telemetry", true)) ?? bool(env.GEMINI_TELEMETRY_ENABLED) ?? settings.enabled === true
  const outfile = flag("telemetry-outfile") ?? env.GEMINI_TELEMETRY_OUTFILE ?? settings.outfile
  const endpoint = flag("telemetry-otlp-endpoint") ?? env.GEMINI_TELEMETRY_OTLP_ENDPOINT ?? settings.otlpEndpoint
  return { settings, enabled, outfile, endpoint }
}

/** The file this session's telemetry goes to, if it goes to a file. */
export const telemetryFile = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env, /** @type {string[]} */ argv) => {
  const { settings, enabled, outfile } = telemetrySetting(cwd, env, argv)
  if (!enabled || typeof outfile !== "string" || outfile === "") return undefined
  const path = typeof settings.outfile === "string" && outfile === settings.outfile ? expand(outfile, env) : outfile
  return isAbsolute(path) ? path : resolve(cwd ?? ".", path)
}

/**
 * Whether this session's telemetry goes over OTLP to the service's own endpoint (`<url>/engine/v1/otlp`):
 * the service then has every model call from it, and the hooks send none.
 */
export const telemetryToService = (
  /** @type {string | undefined} */ cwd,
  /** @type {NodeJS.ProcessEnv} */ env,
  /** @type {string[]} */ argv,
  /** @type {string | undefined} */ url
) => {
  const { settings, enabled, outfile, endpoint } = telemetrySetting(cwd, env, argv)
  if (!enabled || !url || typeof endpoint !== "string" || (typeof outfile === "string" && outfile !== "") || settings.target === "gcp") return false
  return endpoint.replace(/\/+$/, "") === `${url.replace(/\/+$/, "")}/engine/v1/otlp`
}

/** `$VAR`, `${VAR}` and `${VAR:-default}` in a settings value, as the CLI expands them. */
const expand = (/** @type {string} */ value, /** @type {NodeJS.ProcessEnv} */ env) =>
  value.replace(/\$(?:(\w+)|{([^}]+?)(?::-([^}]*))?})/g, (match, a, b, fallback) => env[a || b] ?? fallback ?? match)

const mergedTelemetry = (/** @type {string | undefined} */ cwd, /** @type {NodeJS.ProcessEnv} */ env) => {
  const systemDir = process.platform === "darwin"
    ? "/Library/Application Support/GeminiCli"
    : process.platform === "win32"
    ? "C:\\ProgramData\\gemini-cli"
    : "/etc/gemini-cli"
  const system = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || join(systemDir, "settings.json")
  const files = [
    env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(dirname(system), "system-defaults.json"),
    join(env.GEMINI_CLI_HOME || env.HOME || homedir(), ".gemini", "settings.json"),
    ...(cwd ? [join(cwd, ".gemini", "settings.json")] : []),
    system
  ]
  /** @type {Record<string, unknown>} */
  let merged = {}
  for (const file of files) {
    try {
      const t = JSON.parse(readFileSync(file, "utf8"))?.telemetry
      if (t && typeof t === "object") merged = { ...merged, ...t }
    } catch {
      // no such settings file, or not JSON: the CLI skips it too
    }
  }
  return merged
}

/**
 * Notes the file's identity at a session's start (its records all go to the file the CLI opened,
 * even after a rotation), and moves a file grown too big aside.
 */
export const startReading = (/** @type {string} */ path) => {
  let ino
  let size = 0
  try {
    const st = statSync(path)
    ino = st.ino
    size = st.size
  } catch {
    return { path }
  }
  if (size > rotateAtBytes) {
    try {
      renameSync(path, `${path}.1`)
    } catch {
      // another session moved it first
    }
  }
  return { path, ino, offset: size }
}

/**
 * @typedef {{ id: string, model: string, input: number, output: number, cacheRead: number }} Call
 * @typedef {{ path: string, ino?: number, offset?: number }} Cursor
 */

/**
 * What the telemetry file gained since `cursor` for `sessionId`: its model calls, and the models
 * the user switched to (`/model`, which no hook and no settings file shows). Each record is a
 * pretty-printed JSON object ending in a line `}`; a record still being written waits.
 * @returns {{ calls: Call[], switches: string[], cursor: Cursor }}
 */
export const readRecords = (/** @type {Cursor} */ cursor, /** @type {string} */ sessionId) => {
  const found = open(cursor)
  if (!found) return { calls: [], switches: [], cursor }
  const { fd, ino } = found
  try {
    const size = fstatSync(fd).size
    const from = ino === cursor.ino ? Math.min(cursor.offset ?? 0, size) : 0
    const length = Math.min(size - from, 64 * 1024 * 1024)
    const buf = Buffer.allocUnsafe(Math.max(length, 0))
    const read = length > 0 ? readSync(fd, buf, 0, length, from) : 0
    const end = buf.subarray(0, read).lastIndexOf("\n}\n")
    if (end < 0) return { calls: [], switches: [], cursor: { path: cursor.path, ino, offset: from } }
    /** @type {Call[]} */
    const calls = []
    /** @type {string[]} */
    const switches = []
    for (const record of buf.subarray(0, end + 3).toString("utf8").split("\n}\n")) {
      // Most records are spans and metrics: only those of this session's calls and switches are parsed.
      if (!record.includes(sessionId) || !(record.includes("\"gemini_cli.api_response\"") || record.includes("\"gemini_cli.slash_command.model\""))) continue
      const a = attributesOf(record)
      if (a?.["session.id"] !== sessionId) continue
      if (a["event.name"] === "gemini_cli.slash_command.model" && typeof a.model_name === "string") switches.push(a.model_name)
      const call = callOf(a)
      if (call) calls.push(call)
    }
    return { calls, switches, cursor: { path: cursor.path, ino, offset: from + end + 3 } }
  } finally {
    closeSync(fd)
  }
}

/** The file the session's records go to: the path, or the generation it was moved to. */
const open = (/** @type {Cursor} */ cursor) => {
  for (const path of [cursor.path, `${cursor.path}.1`]) {
    try {
      const fd = openSync(path, "r")
      const ino = fstatSync(fd).ino
      if (cursor.ino === undefined || ino === cursor.ino) return { fd, ino }
      closeSync(fd)
    } catch {
      // not there
    }
  }
  return undefined
}

const attributesOf = (/** @type {string} */ record) => {
  try {
    const value = JSON.parse(`${record.trimStart()}\n}`)
    const a = value?.attributes
    return a && typeof a === "object" ? { ...a, hrTime: value.hrTime } : undefined
  } catch {
    return undefined
  }
}

/** @returns {Call | undefined} */
const callOf = (/** @type {Record<string, any>} */ a) => {
  if (a["event.name"] !== "gemini_cli.api_response" || typeof a.model !== "string") return undefined
  const n = (/** @type {unknown} */ v) => (Number.isFinite(Number(v)) ? Number(v) : 0)
  return {
    id: `${Array.isArray(a.hrTime) ? a.hrTime.join(".") : a["event.timestamp"]}:${a.model}`,
    model: a.model,
    // input_token_count is the prompt's, cached tokens included; the tool-use prompt is input
    // too, and thinking is billed as output.
    input: n(a.input_token_count) + n(a.tool_token_count),
    output: n(a.output_token_count) + n(a.thoughts_token_count),
    cacheRead: n(a.cached_content_token_count)
  }
}
