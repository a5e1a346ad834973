/** The harness's flags, parsed once; `--smoke` shrinks every size that was not given. */
import { parseArgs } from "node:util"

export const allScenarios = ["http_baseline", "ingest", "ingest_batch", "lag", "slo", "ingest_keyed", "ingest_rules", "replay", "memory", "hook", "flood",
  "drift", "ingest_otlp", "storage", "secrets", "export"] as const
export type Scenario = (typeof allScenarios)[number]
export type LogName = "pg" | "kafka"

/** The scenarios measured against one service over one log, one after the other. */
export const ingestGroup: ReadonlyArray<Scenario> = ["ingest", "ingest_batch", "lag", "slo", "ingest_keyed", "ingest_rules", "ingest_otlp", "storage"]

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string" },
    concurrency: { type: "string" },
    users: { type: "string" },
    log: { type: "string", default: "both" },
    scenarios: { type: "string", default: allScenarios.join(",") },
    smoke: { type: "boolean", default: false },
    json: { type: "boolean", default: false },
    "batch-size": { type: "string" },
    "batch-concurrency": { type: "string" },
    "replay-records": { type: "string" },
    "memory-users": { type: "string" },
    "export-events": { type: "string" },
    "hook-runs": { type: "string" },
    "hook-adapter": { type: "string" },
    partitions: { type: "string", default: "8" },
    "cpu-prof": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    warmup: { type: "string" },
    "service-env": { type: "string", multiple: true },
    "connection-per-request": { type: "boolean" }
  }
})

export const smoke = flags.smoke === true
/** One JSON line on stdout, the table on stderr. */
export const json = flags.json === true
const num = (value: string | undefined, normal: number, small: number) => (value === undefined ? (smoke ? small : normal) : Number(value))

/** Printed in the report's JSON as they are: its `options` object keeps these names and this order. */
export const options = {
  durationS: num(flags.duration, 10, 1),
  concurrency: num(flags.concurrency, 64, 8),
  users: num(flags.users, 1000, 50),
  batchSize: num(flags["batch-size"], 100, 20),
  batchConcurrency: num(flags["batch-concurrency"], 8, 2),
  replayRecords: num(flags["replay-records"], 1_000_000, 5_000),
  memoryUsers: num(flags["memory-users"], 100_000, 2_000),
  exportEvents: num(flags["export-events"], 1_000_000, 20_000),
  hookRuns: num(flags["hook-runs"], 50, 5),
  /** hook: the adapters/ folder installed and measured (another version's, to compare in one run); default this repository's. */
  hookAdapter: flags["hook-adapter"],
  partitions: Number(flags.partitions),
  warmupS: smoke ? 0 : 2,
  /**
   * Unmeasured load before the first measurement of a freshly started server (the service, the
   * baseline server): its JIT, the broker's and the database's caches warm up, so the first
   * scenario is not measured colder than the ones after it.
   */
  serverWarmupS: num(flags.warmup, 10, 0),
  logs: (flags.log === "both" ? ["pg", "kafka"] : [flags.log]) as ReadonlyArray<LogName>,
  scenarios: flags.scenarios!.split(",").map((s) => s.trim()).filter((s) => s !== "") as ReadonlyArray<Scenario>,
  cpuProf: flags["cpu-prof"] === true,
  /** Keep the working directory (profiles, service logs) instead of deleting it. */
  keep: flags.keep === true,
  /** lag's and slo's open loops connect for every request, as the adapters do (`Connection: close`), instead of a keep-alive pool. */
  connectionPerRequest: flags["connection-per-request"] === true,
  /** Settings given to every service started (`--service-env KAFKA_PRODUCERS=4`, repeatable): to compare settings in alternating runs. */
  serviceEnv: Object.fromEntries((flags["service-env"] ?? []).map((kv) => {
    const at = kv.indexOf("=")
    if (at <= 0) throw new Error(`--service-env ${kv}: expected NAME=VALUE`)
    return [kv.slice(0, at), kv.slice(at + 1)]
  })) as Record<string, string>
}
export type Options = typeof options

for (const s of options.scenarios) if (!allScenarios.includes(s)) throw new Error(`unknown scenario ${s}; known: ${allScenarios.join(",")}`)
for (const l of options.logs) if (l !== "pg" && l !== "kafka") throw new Error(`--log ${String(l)}: expected pg, kafka or both`)

export const wants = (s: Scenario) => options.scenarios.includes(s)

/** Scenarios measured in the harness's own process: no database, broker or service. */
export const inProcess: ReadonlyArray<Scenario> = ["drift", "secrets"]
