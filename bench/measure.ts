/** What the harness reads of a process (from /proc) and how a load's result becomes figures. */
import { readdirSync, readFileSync } from "node:fs"
import type { LoadResult } from "./loadgen.ts"

/** CPU time (ms) a process has used so far, from /proc/<pid>/stat (utime + stime). */
export const cpuMsOf = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return Number.NaN
  }
}

/** The fields of /proc/<pid>/stat after the command name (which may hold ") "): [0] is field 3. */
const statFields = (pid: number | string): Array<string> | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(") ") + 2).split(" ")
  } catch {
    return undefined // ended meanwhile
  }
}

/**
 * CPU time (ms) of a process and all its descendants (PostgreSQL's postmaster and its backends,
 * the broker's JVM) but `exclude`d ones, in one scan of /proc. Each counts its reaped children
 * too (cutime, cstime), so a backend whose connection closed within a window stays counted.
 */
export const treeCpuMsOf = (root: number, exclude: ReadonlySet<number> = new Set()): number => {
  const stats = new Map<number, Array<string>>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    if (fields) stats.set(Number(entry), fields)
  }
  if (!stats.has(root)) return Number.NaN
  const children = new Map<number, Array<number>>()
  for (const [pid, fields] of stats) {
    const ppid = Number(fields[1])
    children.set(ppid, [...(children.get(ppid) ?? []), pid])
  }
  let ticks = 0
  const queue = [root]
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    const f = stats.get(pid)!
    if (exclude.has(pid)) continue
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])
    queue.push(...(children.get(pid) ?? []))
  }
  return (ticks * 1000) / 100
}

const statusKb = (pid: number, field: "VmRSS" | "VmHWM"): number => {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match ? Number(match[1]) * 1024 : Number.NaN
}

export const rssOf = (pid: number): number => statusKb(pid, "VmRSS")

/** The process's peak resident memory (VmHWM). */
export const rssPeakOf = (pid: number): number => statusKb(pid, "VmHWM")

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

/** The figures of every closed-loop or open-loop load, in the report's order. */
export const throughputFigures = (r: LoadResult, serverCpuMs: number) => ({
  signals_per_s: Math.round(r.signals / r.seconds),
  requests_per_s: Math.round(r.requests / r.seconds),
  p50_ms: round(r.latencyMs.p50, 2),
  p99_ms: round(r.latencyMs.p99, 2),
  max_ms: round(r.latencyMs.max, 2),
  errors: r.errors,
  refused: r.refused,
  pending: r.pending,
  server_cpu_pct: round((serverCpuMs / (r.seconds * 1000)) * 100),
  loadgen_cpu_pct: round(r.cpu.percentOfOneCore)
})

/** CPU (ms) of each process over a load's measured window; undefined where that process is not in play. */
export interface WindowCpu {
  readonly serverMs: number
  readonly databaseMs: number | undefined
  readonly brokerMs: number | undefined
}

/**
 * Each process's CPU in % of one core and in µs per signal taken (cpu_pct / 100 / signals_per_s
 * * 1e6): what a signal costs the service, PostgreSQL, the broker and the load generator.
 */
export const cpuFigures = (r: LoadResult, cpu: WindowCpu, log: string) => {
  // A broker started for the Kafka runs idles through the PostgreSQL ones: not theirs to report.
  const ms = { server: cpu.serverMs, database: cpu.databaseMs, broker: log === "kafka" ? cpu.brokerMs : undefined, loadgen: r.cpu.userMs + r.cpu.systemMs }
  const pct = (v: number | undefined) => (v === undefined ? "n/a" : round((v / (r.seconds * 1000)) * 100))
  const perSignal = (v: number | undefined) => (v === undefined || r.signals === 0 ? "n/a" : Math.round((v * 1000) / r.signals))
  return {
    server_cpu_pct: pct(ms.server),
    database_cpu_pct: pct(ms.database),
    broker_cpu_pct: pct(ms.broker),
    loadgen_cpu_pct: pct(ms.loadgen),
    server_cpu_us_per_signal: perSignal(ms.server),
    database_cpu_us_per_signal: perSignal(ms.database),
    broker_cpu_us_per_signal: perSignal(ms.broker),
    loadgen_cpu_us_per_signal: perSignal(ms.loadgen)
  }
}
