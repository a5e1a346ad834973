// @ts-check
import { closeInherited, existsSync, readSync, rmSync } from "./builtins.js"
import { request } from "./client.js"
import { goalCommand } from "./goals.js"
import { runHook, runSettle } from "./hook.js"
import { readJson, writeJson } from "./json-file.js"
import { loadSettings, saveSettings, settingsPath } from "./settings.js"
import { flush, spooledFiles } from "./spool.js"
import { toolNamed, toolNames } from "./tools/index.js"

const usage = `usage: signal-engine-adapter <command>
  install <tool> [--url URL] [--license-key KEY] [--project] [--fail-mode open|closed] [--send-prompts] [--command CMD]
  uninstall <tool> [--project]
  doctor [<tool>] [--project]
  hook <tool> [<event>]        (run by the tool itself: the event's JSON on stdin)
  flush                        send what is spooled
  goal [list | set <description> | done [<id>] | drop [<id>] | refocus | not-drift]
                               your goals, and answering a goal drift shown
tools: ${toolNames.join(", ")}`

/** @returns {{ positional: string[], flags: Record<string, string | true> }} */
const parseArgs = (/** @type {string[]} */ argv) => {
  const positional = []
  /** @type {Record<string, string | true>} */
  const flags = {}
  for (let i = 0; i < argv.length; i++) {
    const arg = /** @type {string} */ (argv[i])
    if (!arg.startsWith("--")) {
      positional.push(arg)
      continue
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2)
    const boolean = ["project", "send-prompts", "no-send-prompts", "quiet"].includes(/** @type {string} */ (name))
    if (inline !== undefined) flags[/** @type {string} */ (name)] = inline
    else if (boolean) flags[/** @type {string} */ (name)] = true
    else flags[/** @type {string} */ (name)] = argv[++i] ?? ""
  }
  return { positional, flags }
}

const shellQuote = (/** @type {string} */ s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`)

/**
 * The command a tool runs for one event: the launcher in the adapter's home (see launcher.js), by
 * absolute path, so neither PATH nor a later change of Node matters.
 */
const launcherCommand = (/** @type {string} */ launcher, /** @type {string} */ tool) => (/** @type {string} */ event) =>
  [launcher, "hook", tool, event].map(shellQuote).join(" ")

/**
 * The hook's input: read at once from the pipe the tool gives (the stream machinery costs a hook
 * ~10 ms of start-up); a pipe Node made non-blocking answers EAGAIN, and then the stream reads it.
 */
const readStdin = async () => {
  const chunks = []
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(65536)
      const n = readSync(0, buf, 0, buf.length, null)
      if (n === 0) return Buffer.concat(chunks).toString("utf8")
      chunks.push(buf.subarray(0, n))
    }
  } catch {
    for await (const chunk of process.stdin) chunks.push(chunk)
    return Buffer.concat(chunks).toString("utf8")
  }
}

const out = (/** @type {string} */ s) => process.stdout.write(`${s}\n`)
const err = (/** @type {string} */ s) => process.stderr.write(`${s}\n`)

export const main = async (/** @type {string[]} */ argv, env = process.env) => {
  const { positional, flags } = parseArgs(argv)
  const [command, toolName, event] = positional
  const cwd = process.cwd()
  switch (command) {
    case "hook": {
      const tool = await toolNamed(toolName ?? "")
      if (!tool) {
        err(`signal-engine-adapter: unknown tool ${toolName}`)
        return 0 // never break the tool over our own misconfiguration
      }
      const reply = await runHook(tool, event ?? "", await readStdin(), env)
      if (reply.stdout) process.stdout.write(reply.stdout)
      if (reply.stderr) process.stderr.write(reply.stderr.endsWith("\n") ? reply.stderr : `${reply.stderr}\n`)
      // Run through the launcher without the resident hook process: start it for the next hooks.
      if (env.SIGNAL_ENGINE_LAUNCHER === "1") await (await import("./daemon-start.js")).startDaemon(env, env.SIGNAL_ENGINE_DAEMON_MISSING === "1")
      return reply.exitCode
    }
    case "daemon": {
      // Started by a hook (daemon-start.js), not by people; it exits by itself.
      closeInherited()
      await (await import("./daemon.js")).runDaemon(env)
      return new Promise(() => {})
    }
    case "install":
    case "uninstall": {
      const tool = await toolNamed(toolName ?? "")
      if (!tool) {
        err(toolName ? `unknown tool: ${toolName}\n${usage}` : usage)
        return 2
      }
      const path = tool.configPath({ project: flags.project === true, cwd, env })
      if (command === "install") {
        const failMode = flags["fail-mode"]
        if (failMode !== undefined && failMode !== "open" && failMode !== "closed") {
          err("--fail-mode is open or closed")
          return 2
        }
        const saved = saveSettings({
          url: typeof flags.url === "string" ? flags.url.replace(/\/+$/, "") : undefined,
          license_key: typeof flags["license-key"] === "string" ? flags["license-key"] : undefined,
          fail_mode: failMode,
          send_prompts: flags["send-prompts"] === true ? true : flags["no-send-prompts"] === true ? false : undefined
        }, env)
        const cmd = typeof flags.command === "string"
          ? (/** @type {string} */ e) => `${flags.command} hook ${tool.name} ${e}`
          : launcherCommand((await import("./launcher.js")).writeLauncher(loadSettings(env).fail_mode, env), tool.name)
        writeJson(path, tool.install(readJson(path) ?? {}, cmd, { project: flags.project === true, env }))
        out(`${tool.title}: hooks installed in ${path}`)
        for (const note of tool.notes ?? []) out(`note: ${note}`)
        out(`settings: ${saved}`)
        const settings = loadSettings(env)
        if (!settings.url || !settings.license_key) out("note: give --url and --license-key (once) before the hooks can send anything")
        return 0
      }
      const config = readJson(path)
      if (config === undefined) {
        out(`${tool.title}: nothing installed in ${path}`)
        return 0
      }
      const rest = tool.uninstall(config)
      // A config that held nothing but our hooks was most likely written by install: take it away.
      if (Object.keys(rest).length === 0) rmSync(path)
      else writeJson(path, rest)
      out(`${tool.title}: hooks removed from ${path}`)
      return 0
    }
    case "doctor":
      return doctor(toolName, flags.project === true, cwd, env)
    case "settle": {
      // Run by a hook in the background (Plan.settle), not by people.
      closeInherited()
      const tool = await toolNamed(toolName ?? "")
      if (tool && event) await runSettle(tool, event, env)
      return 0
    }
    case "goal":
      return goalCommand(positional.slice(1), out, err, env)
    case "flush": {
      const result = await flush(loadSettings(env), env)
      if (flags.quiet !== true) {
        out(
          `sent ${result.sent}, rejected ${result.rejected}, files left ${result.left}${result.locked ? " (another flush is running)" : ""}${
            result.error ? ` (${result.error})` : ""
          }`
        )
      }
      return result.left > 0 && !result.locked ? 1 : 0
    }
    default:
      err(usage)
      return command === undefined || command === "help" || command === "--help" ? 0 : 2
  }
}

/** One line per check: `ok …` or `FAIL …` with what to do. Exit 1 when anything failed. */
const doctor = async (
  /** @type {string | undefined} */ toolName,
  /** @type {boolean} */ project,
  /** @type {string} */ cwd,
  /** @type {NodeJS.ProcessEnv} */ env
) => {
  let failed = false
  const ok = (/** @type {string} */ s) => out(`ok    ${s}`)
  const fail = (/** @type {string} */ s) => {
    failed = true
    out(`FAIL  ${s}`)
  }
  const settings = loadSettings(env)
  if (!existsSync(settingsPath(env))) fail(`no settings at ${settingsPath(env)}: run install with --url and --license-key`)
  if (!settings.url) fail("no service URL: install --url https://…")
  else if (!/^https?:\/\//.test(settings.url)) fail(`the service URL is not http(s): ${settings.url}`)
  if (!settings.license_key) fail("no license key: install --license-key lic_…")
  else if (!/^lic_[0-9a-f]{20}$/.test(settings.license_key)) fail("the license key is not of the form lic_ and 20 hex digits")
  if (settings.url && settings.license_key) {
    const me = await request({ url: settings.url, license_key: settings.license_key }, "GET", "/me", undefined, Math.max(settings.timeout_ms, 5000))
    if (me.status === 0) fail(`${settings.url} does not answer: ${"reason" in me ? me.reason : ""}`)
    else if (me.status === 401) fail("the license key is not valid (401): check it in the dashboard under Settings, License")
    else if (me.status !== 200) fail(`GET /engine/v1/me answered ${me.status}${"body" in me && me.body?.code ? ` ${me.body.code}` : ""}`)
    else ok(`${settings.url} answers; the key is valid${"body" in me && me.body?.user_id ? ` (user ${me.body.user_id})` : ""}`)
  }
  ok(`fail mode: ${settings.fail_mode}; prompts ${settings.send_prompts ? "sent" : "not sent"}; timeout ${settings.timeout_ms} ms`)
  const spooled = spooledFiles(env).length
  if (spooled > 0) fail(`${spooled} hook events wait in the spool: run signal-engine-adapter flush once the service answers`)
  const { commandProblems, ourCommands } = await import("./launcher.js")
  const chosen = await Promise.all(toolName ? [toolNamed(toolName)] : toolNames.map(toolNamed))
  for (const tool of chosen) {
    if (!tool) {
      fail(`unknown tool: ${toolName}`)
      continue
    }
    const path = tool.configPath({ project, cwd, env })
    let config
    try {
      config = readJson(path)
    } catch (e) {
      fail(`${tool.title}: ${path} is not valid JSON (${e instanceof Error ? e.message : e})`)
      continue
    }
    if (config === undefined) {
      if (toolName) fail(`${tool.title}: no hooks installed (${path} missing): run install ${tool.name}`)
      continue
    }
    const repair = `signal-engine-adapter install ${tool.name}${project ? " --project" : ""}`
    const problems = [...tool.check(config), ...commandProblems(ourCommands(config), repair, env)]
    if (problems.length === 0) ok(`${tool.title}: hooks installed in ${path}`)
    for (const p of problems) fail(`${tool.title}: ${p} (${path})`)
    for (const u of tool.unseen?.() ?? []) out(`note  ${tool.title}: ${u}`)
  }
  return failed ? 1 : 0
}
