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
  /** The scenario, or for lag the share of the max ingest it ran at. */
  readonly scenario: Scenario | "lag_50" | "lag_80"
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

const verdict = /^verdict_(\w+)_ms$/
const cpuPct = /^(\w+)_cpu_pct$/
const cpuPerSignal = /^\w+_cpu_us_per_signal$/
/** The CPU line's order, whatever the figures' (ingest's server and loadgen come first). */
const processes = ["server", "database", "broker", "loadgen"]

/**
 * One row: its figures on one line, except (where present) the verdict latencies and the CPU per
 * process, each on a line of its own below it so the four processes' costs read side by side.
 */
const rowLines = (row: Row): Array<string> => {
  const entries = Object.entries(row.figures)
  const perSignal = entries.some(([k]) => cpuPerSignal.test(k))
  const inline = entries.filter(([k]) => !verdict.test(k) && !(perSignal && (cpuPct.test(k) || cpuPerSignal.test(k))))
  const lines = [`${row.scenario.padEnd(14)} ${row.log.padEnd(6)} ${inline.map(([k, v]) => `${k}=${v}`).join("  ")}`]
  const indent = " ".repeat(22)
  const verdicts = entries.flatMap(([k, v]) => (verdict.test(k) ? [`${verdict.exec(k)![1]} ${v}`] : []))
  if (verdicts.length > 0) lines.push(`${indent}verdict ms: ${verdicts.join("  ")}`)
  if (perSignal) {
    const cpu = processes.flatMap((name) => {
      const pct = row.figures[`${name}_cpu_pct`]
      const us = row.figures[`${name}_cpu_us_per_signal`]
      if (pct === undefined) return []
      return [pct === "n/a" ? `${name} n/a` : `${name} ${pct}% ${us} µs/signal`]
    })
    lines.push(`${indent}cpu: ${cpu.join("  |  ")}`)
  }
  return lines
}

export const table = ({ machine: m, options, smoke, rows, profiles }: Report) => {
  const lines: Array<string> = []
  lines.push(`machine: ${m.nproc} cores, ${m.cpu}, ${m.memory_gb} GB, node ${m.node}, taskset ${m.taskset ? "yes" : "no"}`)
  lines.push(
    `options: duration ${options.durationS}s, concurrency ${options.concurrency}, users ${options.users}, batch ${options.batchSize}x${options.batchConcurrency}, partitions ${options.partitions}${
      smoke ? ", smoke" : ""
    }`
  )
  for (const row of rows) lines.push(...rowLines(row))
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
