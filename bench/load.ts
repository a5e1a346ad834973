/** Runs the load generator (bench/loadgen.ts) as a process of its own, on core 1. */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import type { LoadResult, LoadSpec } from "./loadgen.ts"
import { cpuMsOf } from "./measure.ts"
import { node, pinned, root, run } from "./processes.ts"
import { say } from "./say.ts"

export type Load = (spec: LoadSpec) => Promise<LoadResult>

/** A load run's result and the server's CPU over its measured part. */
export type Measured = (pid: number, spec: LoadSpec) => Promise<{ readonly result: LoadResult; readonly serverCpuMs: number }>

export const makeLoad = (dir: string): { readonly load: Load; readonly measured: Measured } => {
  let specs = 0
  const load: Load = async (spec) => {
    // In a file: 100,000 keys do not fit on a command line.
    const file = join(dir, `load-${specs++}.json`)
    writeFileSync(file, JSON.stringify(spec))
    const [cmd, argv] = pinned(1, node, [join(root, "bench", "loadgen.ts"), file])
    const { stdout } = await run(cmd, argv, { cwd: root, maxBuffer: 64 * 1024 * 1024 })
    const result = JSON.parse(stdout.trim().split("\n").pop()!) as LoadResult
    if (result.errors > 0) {
      const kinds = Object.entries(result.errorKinds).map(([kind, n]) => `${kind} ×${n}`).join(", ")
      say(`the load generator counted ${result.errors} errors: ${kinds}`)
    }
    return result
  }
  const measured: Measured = async (pid, spec) => {
    // The warm-up is inside the load generator; server CPU is counted over the whole call.
    const before = cpuMsOf(pid)
    const result = await load(spec)
    const serverCpuMs = cpuMsOf(pid) - before
    return { result, serverCpuMs: serverCpuMs * (result.seconds / (result.seconds + (spec.warmupS ?? 0))) }
  }
  return { load, measured }
}
