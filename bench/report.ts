/**
 * The run's report: a table (stdout, or stderr with --json) and, with --json, exactly one JSON
 * line on stdout with every figure. Its shape is what bench/results/*.json hold: keep it.
 */
import { readFileSync } from "node:fs"
import { cpus, totalmem } from "node:os"
import type { LogName, Options, Scenario } from "./options.ts"
import { round } from "./measure.ts"
import { hasTaskset } from "./processes.ts"
import type { Profile } from "./profiles.ts"

export interface Row {
  readonly scenario: Scenario
  readonly log: LogName | "-"
  readonly figures: Record<string, number | string>
}

export const machine = () => ({
  nproc: cpus().length,
  cpu: /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpus()[0]?.model ?? "unknown",
  memory_gb: round(totalmem() / 1024 ** 3),
  node: process.version,
  taskset: hasTaskset
})

export interface Report {
  readonly machine: ReturnType<typeof machine>
  readonly options: Options
  readonly smoke: boolean
  readonly failed: boolean
  readonly rows: ReadonlyArray<Row>
  readonly profiles: ReadonlyArray<Profile>
}

export const table = ({ machine: m, options, smoke, rows, profiles }: Report) => {
  const lines: Array<string> = []
  lines.push(`machine: ${m.nproc} cores, ${m.cpu}, ${m.memory_gb} GB, node ${m.node}, taskset ${m.taskset ? "yes" : "no"}`)
  lines.push(`options: duration ${options.durationS}s, concurrency ${options.concurrency}, users ${options.users}, batch ${options.batchSize}x${options.batchConcurrency}, partitions ${options.partitions}${smoke ? ", smoke" : ""}`)
  for (const row of rows) {
    const figures = Object.entries(row.figures).map(([k, v]) => `${k}=${v}`).join("  ")
    lines.push(`${row.scenario.padEnd(14)} ${row.log.padEnd(6)} ${figures}`)
  }
  for (const p of profiles) {
    lines.push(`profile ${p.id} (${p.file}), top self time:`)
    for (const e of p.top) lines.push(`  ${String(e.percent).padStart(5)}%  ${e.fn}  ${e.where}`)
  }
  return lines.join("\n")
}

/** The JSON line: machine, options, failed, results, profiles (without their files). */
export const jsonLine = (report: Report) =>
  JSON.stringify({
    machine: report.machine,
    options: report.options,
    failed: report.failed,
    results: report.rows,
    profiles: report.profiles.map((p) => ({ id: p.id, top: p.top }))
  })
