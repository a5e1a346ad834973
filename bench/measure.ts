/** What the harness reads of a process (from /proc) and how a load's result becomes figures. */
import { readFileSync } from "node:fs"
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
