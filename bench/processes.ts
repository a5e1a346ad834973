/**
 * The harness's child processes: the service, the baseline server and the load generator, each
 * pinned to a core when taskset exists, each with its output in a log file of the working
 * directory; and the environment they inherit.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process"
import { createWriteStream, mkdirSync } from "node:fs"
import { cpus } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { promisify } from "node:util"

export const root = join(import.meta.dirname, "..")
export const run = promisify(execFile)
export const node = process.execPath

export const hasTaskset = spawnSync("sh", ["-c", "command -v taskset"]).status === 0 && cpus().length >= 2
/** The service and the baseline server on core 0, the load generator on core 1 (when taskset exists). */
export const pinned = (core: number, command: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  hasTaskset ? ["taskset", ["-c", String(core), command, ...args]] : [command, [...args]]

/** This process's environment without log settings of its own (CI exports KAFKA_* for the tests). */
export const baseEnv: Record<string, string | undefined> = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith("KAFKA_") && k !== "LOG_PARTITIONS" && k !== "DATABASE_URL")
)

const children = new Set<ChildProcess>()

export interface Started {
  readonly child: ChildProcess
  /** The last 4,000 characters of its output, for an error message. */
  readonly output: () => string
  readonly logFile: string
}

/** A child on a core; its output goes to <dir>/logs/<name>.log (kept with --keep). */
export const startChild = (dir: string, core: number, name: string, args: ReadonlyArray<string>, env: Record<string, string>): Started => {
  const [cmd, argv] = pinned(core, node, args)
  const child = spawn(cmd, argv, { cwd: root, env: { ...baseEnv, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  children.add(child)
  mkdirSync(join(dir, "logs"), { recursive: true })
  const file = createWriteStream(join(dir, "logs", `${name}.log`))
  let output = ""
  const keep = (c: Buffer) => {
    file.write(c)
    output = (output + c.toString()).slice(-4000)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  child.on("exit", () => children.delete(child))
  return { child, output: () => output, logFile: join(dir, "logs", `${name}.log`) }
}

export const stopChild = (child: ChildProcess) =>
  new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done()
    const kill = setTimeout(() => child.kill("SIGKILL"), 15_000)
    child.once("exit", () => {
      clearTimeout(kill)
      done()
    })
    child.kill("SIGTERM")
  })

/** Every child still running, at the end of a run or on Ctrl-C. */
export const killChildren = () => {
  for (const child of children) child.kill("SIGKILL")
}

export const waitHttp = async (port: number, path: string, what: string, started: Started) => {
  const deadline = Date.now() + 90_000
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`${what} exited: ${started.output()}`)
    const up = await fetch(`http://127.0.0.1:${port}${path}`).then((r) => r.status < 500, () => false)
    if (up) return
    if (Date.now() > deadline) throw new Error(`${what} did not answer within 90 s: ${started.output()}`)
    await sleep(100)
  }
}
