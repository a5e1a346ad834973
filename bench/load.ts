/** Runs the load generator (bench/loadgen.ts) as a process of its own, on core 1. */
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import type { LoadResult, LoadSpec } from "./loadgen.ts"
import { cpuMsOf, treeCpuMsOf, type WindowCpu } from "./measure.ts"
import { node, pinned, root } from "./processes.ts"
import { say } from "./say.ts"

export type Load = (spec: LoadSpec) => Promise<LoadResult>

/** A load run's result and the server's CPU (and the database's, the broker's) over its measured part. */
export type Measured = (
  pid: number,
  spec: LoadSpec,
  /** Database backends whose CPU is the harness's own (lag's poller), left out of the database's. */
  harnessBackends?: () => ReadonlySet<number>,
  /** Told when the measured part starts and ends (lag scrapes the service's stages then). */
  window?: { readonly started: () => void; readonly ended: () => void }
) => Promise<{ readonly result: LoadResult; readonly serverCpuMs: number; readonly cpu: WindowCpu }>

/** The processes besides the server whose CPU a measured load reports: their root pids, when running. */
export interface Others {
  readonly databasePid: () => number | undefined
  readonly brokerPid: () => number | undefined
}

/** Runs the generator; `onMeasuring` when its measured part starts, `onDone` when it ends (before it exits). */
const runGenerator = (file: string, onMeasuring: () => void, onDone: () => void) =>
  new Promise<LoadResult>((resolve, reject) => {
    const [cmd, argv] = pinned(1, node, [join(root, "bench", "loadgen.ts"), file])
    const child = spawn(cmd, argv, { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    let result: LoadResult | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      for (let i = out.indexOf("\n"); i >= 0; i = out.indexOf("\n")) {
        const line = out.slice(0, i).trim()
        out = out.slice(i + 1)
        if (line === "measuring") onMeasuring()
        else if (line.startsWith("{")) {
          onDone()
          result = JSON.parse(line) as LoadResult
        }
      }
    })
    child.stderr.on("data", (chunk: Buffer) => (err = (err + chunk.toString()).slice(-4000)))
    child.on("error", reject)
    child.on("close", (code) => code === 0 && result ? resolve(result) : reject(new Error(`the load generator exited with ${code}: ${err}`)))
  })

export const makeLoad = (dir: string, others: Others): { readonly load: Load; readonly measured: Measured } => {
  let specs = 0
  const run = async (spec: LoadSpec, onMeasuring: () => void = () => {}, onDone: () => void = () => {}) => {
    // In a file: 100,000 keys do not fit on a command line.
    const file = join(dir, `load-${specs++}.json`)
    writeFileSync(file, JSON.stringify(spec))
    const result = await runGenerator(file, onMeasuring, onDone)
    if (result.errors > 0) {
      const kinds = Object.entries(result.errorKinds).map(([kind, n]) => `${kind} ×${n}`).join(", ")
      say(`the load generator counted ${result.errors} errors: ${kinds}`)
    }
    return result
  }
  const measured: Measured = async (pid, spec, harnessBackends = () => new Set(), window) => {
    // Sampled when the generator says its measured part starts and ends: its warm-up and its
    // own start and exit stay out of every process's CPU.
    const sample = () => {
      const databasePid = others.databasePid()
      const brokerPid = others.brokerPid()
      return {
        server: cpuMsOf(pid),
        database: databasePid === undefined ? undefined : treeCpuMsOf(databasePid, harnessBackends()),
        broker: brokerPid === undefined ? undefined : treeCpuMsOf(brokerPid)
      }
    }
    let before = sample()
    let after = before
    const result = await run(spec, () => {
      before = sample()
      window?.started()
    }, () => {
      after = sample()
      window?.ended()
    })
    const delta = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : b - a)
    const cpu: WindowCpu = {
      serverMs: after.server - before.server,
      databaseMs: delta(before.database, after.database),
      brokerMs: delta(before.broker, after.broker)
    }
    return { result, serverCpuMs: cpu.serverMs, cpu }
  }
  return { load: (spec) => run(spec), measured }
}
