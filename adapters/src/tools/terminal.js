// @ts-check
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from "../builtins.js"
import { hookParentPid } from "../hook-context.js"
import { dirname } from "node:path"
import { spooledFiles } from "../spool.js"

/**
 * Telling the person at a headless run what only a tool's UI would show. `claude -p` (text output)
 * and `copilot -p` print nothing of a hook's warning, and a hook's own stderr is a pipe the tool
 * keeps to itself: the line goes to the tool's own standard error instead, reopened through
 * /proc/<pid>/fd/2 (Linux). That works for a terminal, a file or a shell pipe, not for a socket
 * (the stdio Node's child_process gives) nor where there is no /proc (macOS): there only the
 * tool's own channels carry the message, and `doctor` says so.
 */

/** Whether this machine lets a hook reach a tool's stderr at all. */
export const canReachStderr = () => process.platform === "linux" && existsSync("/proc/self/fd")

/** A process's command line (argv), or undefined where it cannot be read. */
export const argsOf = (/** @type {number} */ pid) => {
  if (!Number.isInteger(pid) || pid <= 1) return undefined
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, "utf8")
    return text.split("\0").slice(0, text.endsWith("\0") ? -1 : undefined)
  } catch {
    return undefined
  }
}

export const parentOf = (/** @type {number} */ pid) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return undefined
  }
}

/** The value of `--name value` or `--name=value` in an argv (the last one given wins, as in the tools). */
export const flagValue = (/** @type {ReadonlyArray<string>} */ args, /** @type {string} */ name) => {
  let value
  for (let i = 0; i < args.length; i++) {
    const a = /** @type {string} */ (args[i])
    if (a === name) value = args[i + 1]
    else if (a.startsWith(`${name}=`)) value = a.slice(name.length + 1)
  }
  return value
}

/** Writes a line to a process's stderr; false when that cannot be done. */
const writeStderr = (/** @type {number} */ pid, /** @type {string} */ line) => {
  try {
    const fd = openSync(`/proc/${pid}/fd/2`, "a")
    try {
      writeSync(fd, `${line}\n`)
    } finally {
      closeSync(fd)
    }
    return true
  } catch {
    return false
  }
}

/**
 * Tells the user `message` on the stderr of the tool's process `pid`, once per session: with the
 * service down every hook of a run has the same warning, and one line says it. The first hook to
 * create the message's marker file says it (hooks of one session may run at the same time).
 */
export const tellUser = (
  /** @type {number} */ pid,
  /** @type {string} */ message,
  /** @type {{ tool: string, sessionId: string, ctx: import("../hook.js").HookContext }} */ session
) => {
  const { tool, sessionId, ctx } = session
  let h = 0x811c9dc5
  for (let i = 0; i < message.length; i++) h = Math.imul(h ^ message.charCodeAt(i), 0x01000193) >>> 0
  const marker = `${ctx.state.path(tool, sessionId, ctx.env)}.told-${h.toString(16)}`
  try {
    mkdirSync(dirname(marker), { recursive: true, mode: 0o700 })
    closeSync(openSync(marker, "wx", 0o600))
  } catch {
    return // told already, or the adapter's folder cannot be written: better silent than repeated
  }
  // What waits in the spool is said with the warning: it is sent once a hook reaches the service.
  const waiting = spooledFiles(ctx.env).length
  writeStderr(pid, `signal-engine: warning: ${message}${waiting > 0 ? ` (spooled for later: ${waiting} hook event${waiting === 1 ? "" : "s"})` : ""}`)
}

/**
 * The nearest process above this hook whose command line `matches` (the tool, where it runs the
 * hook through a shell or a loader of its own), or undefined.
 */
export const toolAncestor = (/** @type {(args: string[]) => boolean} */ matches, depth = 4) => {
  let pid = hookParentPid()
  for (let i = 0; i < depth && pid > 1; i++) {
    const args = argsOf(pid)
    if (!args) return undefined
    if (matches(args)) return { pid, args }
    const up = parentOf(pid)
    if (up === undefined) return undefined
    pid = up
  }
  return undefined
}
