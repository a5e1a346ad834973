/**
 * `npm run bench`: starts an embedded PostgreSQL (and, for `--log kafka|both`, a Kafka broker via
 * infra/kafka/start.sh) on free ports in a temporary directory, runs the service as a child
 * process (`node bin/signal-engine.js serve`), loads it from a separate load-generator process
 * (bench/loadgen.ts) over loopback, and prints a table; with `--json`, the table goes to stderr
 * and stdout gets exactly one JSON line with every figure. See docs/benchmarks.md.
 *
 * This file wires the parts: options.ts (flags), database.ts and broker.ts (the infrastructure),
 * service.ts and processes.ts (the processes), load.ts and measure.ts (the measurements),
 * scenarios/ (one file per scenario or family), report.ts (the table and the JSON line).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Broker, startBroker } from "./broker.ts"
import type { Bench } from "./context.ts"
import { startDatabase } from "./database.ts"
import { makeLoad } from "./load.ts"
import { ingestGroup, inProcess, json, options, smoke, wants } from "./options.ts"
import { hasTaskset, killChildren } from "./processes.ts"
import { makeProfiles } from "./profiles.ts"
import { jsonLine, machine, type Report, type Row, table } from "./report.ts"
import { say } from "./say.ts"
import { driftScenario } from "./scenarios/drift.ts"
import { secretsScenario } from "./scenarios/secrets.ts"
import { exportScenario } from "./scenarios/export.ts"
import { flood } from "./scenarios/flood.ts"
import { hookScenario } from "./scenarios/hook.ts"
import { httpBaseline } from "./scenarios/http-baseline.ts"
import { ingestScenarios } from "./scenarios/ingest.ts"
import { memory } from "./scenarios/memory.ts"
import { replayScenario } from "./scenarios/replay.ts"

const rows: Array<Row> = []

const finish = (failed: boolean, taken: Report["profiles"]): never => {
  const report: Report = { machine: machine(), options, smoke, failed, rows, profiles: taken }
  if (json) {
    process.stderr.write(`${table(report)}\n`)
    process.stdout.write(`${jsonLine(report)}\n`)
  } else {
    process.stdout.write(`${table(report)}\n`)
  }
  process.exit(failed ? 1 : 0)
}

if (wants("drift")) {
  say("drift: the detector on the corpus, its cost and its state")
  driftScenario((row) => rows.push(row), smoke)
}
if (wants("secrets")) {
  say("secrets: the adapter's scanner on its corpus, and what it adds to a hook")
  await secretsScenario((row) => rows.push(row), smoke)
}
if (options.scenarios.every((s) => inProcess.includes(s))) finish(false, [])

const dir = mkdtempSync(join(tmpdir(), "signal-engine-bench-"))
say(`working directory ${dir}; taskset ${hasTaskset ? "on (server core 0, load generator core 1)" : "unavailable"}`)
const database = await startDatabase(dir)
let broker: Broker | undefined

const cleanup = async () => {
  killChildren()
  await broker?.stop()
  await database.stop()
  if (options.keep) say(`kept ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
process.once("SIGINT", () => void cleanup().finally(() => process.exit(130)))

const profiles = makeProfiles(dir, options.cpuProf)

let failed = false
try {
  if (options.logs.includes("kafka") && options.scenarios.some((s) => s !== "http_baseline")) broker = await startBroker(dir)
  const load = makeLoad(dir, { databasePid: database.pid, brokerPid: () => broker?.pid() })
  const context: Bench = { dir, database, broker, ...load, profiles, record: (row) => rows.push(row) }
  let baselineRps: number | undefined
  if (wants("http_baseline")) {
    say("http_baseline")
    baselineRps = await httpBaseline(context)
  }
  for (const log of options.logs) {
    if (ingestGroup.some(wants)) await ingestScenarios(context, log, baselineRps)
    if (wants("replay")) await replayScenario(context, log)
    if (wants("memory")) await memory(context, log)
    if (wants("hook")) await hookScenario(context, log)
    if (wants("flood")) await flood(context, log)
  }
  // Reads only PostgreSQL's projections: the same over either log, so measured once.
  if (wants("export")) {
    say("export")
    await exportScenario(context)
  }
} catch (error) {
  failed = true
  console.error("bench: failed:", error)
} finally {
  await cleanup()
}

finish(failed, profiles.taken)
