// @ts-check
import { AsyncLocalStorage } from "node:async_hooks"
import { randomBytes, timingSafeEqual } from "node:crypto"
import { createServer } from "node:net"
import { join } from "node:path"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "./builtins.js"
import { servePlacesWith } from "./hook-context.js"
import { keepConnections } from "./http1.js"
import { runHook } from "./hook.js"
import { daemonFile } from "./daemon-start.js"
import { adapterScript } from "./launcher.js"
import { toolNamed } from "./tools/index.js"

/**
 * The resident hook process. A Node start is most of what a hook costs the tool (~25 ms here), so
 * after the first hook of a while, the launcher hands each hook to this process instead: bash
 * sends it the hook's input, environment, folder and parent over a loopback socket and prints the
 * answer (a hook then costs a `sh`, a `bash` and an `env`, not a Node start). It runs exactly the
 * code a Node hook runs (runHook), keeps its connections to the service open between hooks,
 * serves hooks at once, and exits when idle, when its file
 * is gone or names another process, or when the adapter on disk changed (an upgrade). Anyone on
 * the machine may connect to a loopback port, so each request carries the secret in the file
 * (mode 0600 in the adapter's home, which only its user reads).
 *
 * Request: token, tool, event, folder, parent pid, then `env -0`'s entries, an empty entry, the
 * hook's input: each ended by a NUL. Answer: the exit code and a newline, stdout, NUL, stderr,
 * NUL; or `fallback` and a newline, and the launcher runs the hook with Node.
 */

const IDLE_MS = 10 * 60_000
const CHECK_MS = 2_000
/** A request that does not complete in this long is dropped (the launcher then runs the hook itself). */
const REQUEST_MS = 60_000

/** The fields of a complete request, or undefined while more is to come. */
export const parseRequest = (/** @type {Buffer} */ data) => {
  const parts = data.toString("utf8").split("\0")
  const separator = parts.indexOf("", 5)
  if (separator < 0 || parts.length < separator + 3) return undefined
  const [token = "", tool = "", event = "", cwd = "", ppid = ""] = parts
  /** @type {NodeJS.ProcessEnv} */
  const env = {}
  for (const entry of parts.slice(5, separator)) {
    const eq = entry.indexOf("=")
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1)
  }
  return { token, tool, event, cwd, ppid: Number(ppid), env, input: parts[separator + 1] ?? "" }
}

const sameToken = (/** @type {string} */ a, /** @type {string} */ b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

/** Runs the daemon until it has reason to stop. */
export const runDaemon = async (env = process.env) => {
  // Resident: its hooks' requests to the service reuse connections (adapters/src/http1.js).
  keepConnections(true)
  const file = daemonFile(env)
  const token = randomBytes(24).toString("hex")
  const script = adapterScript()
  const loaded = statSync(script).mtimeMs
  const home = env.HOME
  /** @type {AsyncLocalStorage<import("./hook-context.js").HookPlace>} */
  const places = new AsyncLocalStorage()
  servePlacesWith(() => places.getStore())
  let lastUsed = Date.now()

  const serve = async (/** @type {NonNullable<ReturnType<typeof parseRequest>>} */ req) => {
    // Another HOME (homedir() would differ), another token or another adapter: Node runs it.
    if (!sameToken(req.token, token) || req.env.HOME !== home || statSync(script).mtimeMs !== loaded) return "fallback\n"
    const tool = await toolNamed(req.tool)
    if (!tool) return "fallback\n"
    const reply = await places.run({ ppid: req.ppid, cwd: req.cwd }, () => runHook(tool, req.event, req.input, req.env))
    const stderr = reply.stderr ? (reply.stderr.endsWith("\n") ? reply.stderr : `${reply.stderr}\n`) : ""
    return `${reply.exitCode}\n${reply.stdout ?? ""}\0${stderr}\0`
  }

  const server = createServer((socket) => {
    lastUsed = Date.now()
    /** @type {Buffer[]} */
    const chunks = []
    let done = false
    socket.setTimeout(REQUEST_MS, () => socket.destroy())
    socket.on("error", () => socket.destroy())
    socket.on("data", (chunk) => {
      if (done) return
      chunks.push(chunk)
      const req = parseRequest(Buffer.concat(chunks))
      if (!req) return
      done = true
      serve(req).then(
        (answer) => socket.end(answer),
        () => socket.end("fallback\n")
      ).finally(() => {
        lastUsed = Date.now()
      })
    })
  })

  // Requests in flight finish (close waits for their connections); new ones go to Node.
  const stop = () => server.close(() => process.exit(0))

  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)))
  const address = server.address()
  if (address === null || typeof address === "string") return stop()
  mkdirSync(join(file, ".."), { recursive: true, mode: 0o700 })
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, `${address.port} ${token}\n`, { mode: 0o600 })
  renameSync(tmp, file)
  const ours = `${address.port} ${token}\n`

  setInterval(() => {
    let current = ""
    try {
      current = existsSync(file) ? readFileSync(file, "utf8") : ""
    } catch {
      current = ""
    }
    const idle = Date.now() - lastUsed > IDLE_MS
    if (current !== ours || idle) {
      if (current === ours) rmSync(file, { force: true })
      stop()
    }
  }, CHECK_MS).unref()
  // The process lives as long as its server does.
}
