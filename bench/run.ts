/**
 * `npm run bench`: starts an embedded PostgreSQL (and, for `--log kafka|both`, a Kafka broker via
 * infra/kafka/start.sh) on free ports in a temporary directory, runs the service as a child
 * process (`node bin/signal-engine.js serve`), loads it from a separate load-generator process
 * (bench/loadgen.ts) over loopback, and prints a table; with `--json`, the table goes to stderr
 * and stdout gets exactly one JSON line with every figure. See docs/benchmarks.md.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { parseArgs, promisify } from "node:util"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { Kafka, logLevel } from "kafkajs"
import { patchKafkajs } from "../src/log/kafkajs-patches.ts"
import { partitionForKey } from "../src/log/murmur2.ts"
import { databaseFromUrl } from "../src/store/database.ts"
import { startEmbeddedPostgres } from "../src/store/embedded-postgres.ts"
import { freePort } from "../test/support/ports.ts"
import { hookLatency } from "./hook-latency.ts"
import type { LoadResult, LoadSpec } from "./loadgen.ts"
import { topSelfTime } from "./profile-top.ts"

const root = join(import.meta.dirname, "..")
const run = promisify(execFile)
const allScenarios = ["http_baseline", "ingest", "ingest_batch", "lag", "ingest_keyed", "ingest_rules", "replay", "memory", "hook", "flood"] as const
type Scenario = (typeof allScenarios)[number]
type LogName = "pg" | "kafka"

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
    "hook-runs": { type: "string" },
    partitions: { type: "string", default: "8" },
    "cpu-prof": { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    warmup: { type: "string" }
  }
})

const smoke = flags.smoke === true
const num = (value: string | undefined, normal: number, small: number) => (value === undefined ? (smoke ? small : normal) : Number(value))
const options = {
  durationS: num(flags.duration, 10, 1),
  concurrency: num(flags.concurrency, 64, 8),
  users: num(flags.users, 1000, 50),
  batchSize: num(flags["batch-size"], 100, 20),
  batchConcurrency: num(flags["batch-concurrency"], 8, 2),
  replayRecords: num(flags["replay-records"], 1_000_000, 5_000),
  memoryUsers: num(flags["memory-users"], 100_000, 2_000),
  hookRuns: num(flags["hook-runs"], 50, 5),
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
  keep: flags.keep === true
}
for (const s of options.scenarios) if (!allScenarios.includes(s)) throw new Error(`unknown scenario ${s}; known: ${allScenarios.join(",")}`)
for (const l of options.logs) if (l !== "pg" && l !== "kafka") throw new Error(`--log ${String(l)}: expected pg, kafka or both`)

const say = (line: string) => process.stderr.write(`bench: ${line}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const wants = (s: Scenario) => options.scenarios.includes(s)
/** The scenarios measured against one service over one log, one after the other. */
const ingestGroup: ReadonlyArray<Scenario> = ["ingest", "ingest_batch", "lag", "ingest_keyed", "ingest_rules"]

// ---------------------------------------------------------------- processes

const hasTaskset = spawnSync("sh", ["-c", "command -v taskset"]).status === 0 && cpus().length >= 2
/** The service and the baseline server on core 0, the load generator on core 1 (when taskset exists). */
const pinned = (core: number, command: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  hasTaskset ? ["taskset", ["-c", String(core), command, ...args]] : [command, [...args]]

const node = process.execPath
/** This process's environment without log settings of its own (CI exports KAFKA_* for the tests). */
const baseEnv: Record<string, string | undefined> = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith("KAFKA_") && k !== "LOG_PARTITIONS" && k !== "DATABASE_URL")
)
const children = new Set<ChildProcess>()

/** A child on a core; its output goes to <dir>/logs/<name>.log (kept with --keep). */
const startChild = (core: number, name: string, args: ReadonlyArray<string>, env: Record<string, string>) => {
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

const stopChild = (child: ChildProcess) =>
  new Promise<void>((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done()
    const kill = setTimeout(() => child.kill("SIGKILL"), 15_000)
    child.once("exit", () => {
      clearTimeout(kill)
      done()
    })
    child.kill("SIGTERM")
  })

const waitHttp = async (port: number, path: string, what: string, started: { child: ChildProcess; output: () => string }) => {
  const deadline = Date.now() + 90_000
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`${what} exited: ${started.output()}`)
    const up = await fetch(`http://127.0.0.1:${port}${path}`).then((r) => r.status < 500, () => false)
    if (up) return
    if (Date.now() > deadline) throw new Error(`${what} did not answer within 90 s: ${started.output()}`)
    await sleep(100)
  }
}

/** CPU time (ms) a process has used so far, from /proc/<pid>/stat (utime + stime). */
const cpuMsOf = (pid: number): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return Number.NaN
  }
}

const rssOf = (pid: number): number => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match ? Number(match[1]) * 1024 : Number.NaN
}

/** The process's peak resident memory (VmHWM). */
const rssPeakOf = (pid: number): number => {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match ? Number(match[1]) * 1024 : Number.NaN
}

let specs = 0
const load = async (spec: LoadSpec): Promise<LoadResult> => {
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

// ---------------------------------------------------------------- infrastructure

const dir = mkdtempSync(join(tmpdir(), "signal-engine-bench-"))
say(`working directory ${dir}; taskset ${hasTaskset ? "on (server core 0, load generator core 1)" : "unavailable"}`)
const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), ephemeral: true })
const admin = ManagedRuntime.make(databaseFromUrl(pg.url))
const adminSql = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  admin.runPromise(Effect.flatMap(SqlClient.SqlClient, f))

let kafka: { readonly brokers: string; readonly stop: () => Promise<void> } | undefined
const kafkaEnv = async () => {
  const env = {
    KAFKA_DATA_DIR: join(dir, "kafka"),
    KAFKA_PORT: String(await freePort()),
    KAFKA_CONTROLLER_PORT: String(await freePort())
  }
  say("starting Kafka (infra/kafka/start.sh)")
  await run("bash", [join(root, "infra", "kafka", "start.sh")], { env: { ...baseEnv, ...env } })
  return {
    brokers: `127.0.0.1:${env.KAFKA_PORT}`,
    stop: async () => {
      await run("bash", [join(root, "infra", "kafka", "stop.sh")], { env: { ...baseEnv, ...env } }).catch(() => undefined)
    }
  }
}

const cleanup = async () => {
  for (const child of children) child.kill("SIGKILL")
  await admin.dispose().catch(() => undefined)
  await kafka?.stop()
  await pg.stop()
  if (pg.dataDir !== join(dir, "pg")) rmSync(pg.dataDir, { recursive: true, force: true })
  if (options.keep) say(`kept ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
process.once("SIGINT", () => void cleanup().finally(() => process.exit(130)))

/** A new database, migrated by the service's own CLI. */
const newDatabase = async (name: string): Promise<string> => {
  await adminSql((sql) => sql`CREATE DATABASE ${sql(name)}`)
  const url = new URL(pg.url)
  url.pathname = `/${name}`
  await run(node, [join(root, "bin", "signal-engine.js"), "migrate"], { cwd: root, env: { ...baseEnv, DATABASE_URL: url.toString() } })
  return url.toString()
}

const withDb = async <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> => {
  const rt = ManagedRuntime.make(databaseFromUrl(url))
  try {
    return await rt.runPromise(Effect.flatMap(SqlClient.SqlClient, f))
  } finally {
    await rt.dispose()
  }
}

interface Tenant {
  readonly orgId: string
  readonly userIds: ReadonlyArray<string>
  readonly keys: ReadonlyArray<string>
}

/**
 * Users and license keys straight into the tables (one statement each), not through the
 * management API: 100,000 users over HTTP would take minutes and measure the management API.
 * The rows are what the API would write: a team-plan org, users, SHA-256-hashed `lic_` keys.
 */
const seedUsers = async (url: string, count: number, name = "bench"): Promise<Tenant> => {
  const orgId = `org_${name}${randomBytes(4).toString("hex")}`
  const userIds = Array.from({ length: count }, (_, i) => `user_${name}_${i}`)
  const keys = userIds.map(() => `lic_${randomBytes(10).toString("hex")}`)
  const hashes = keys.map((k) => createHash("sha256").update(k).digest("hex"))
  const keyIds = keys.map((_, i) => `lk_${name}_${i}`)
  await withDb(url, (sql) =>
    Effect.gen(function*() {
      yield* sql`INSERT INTO orgs (id, name, plan) VALUES (${orgId}, ${name}, 'team')`
      yield* sql`INSERT INTO users (id, org_id, email, name, role)
        SELECT id, ${orgId}, id || '@bench.test', id, 'member' FROM unnest(${userIds}::text[]) AS id`
      yield* sql`INSERT INTO license_keys (id, org_id, user_id, environment, key_hash, key_hint)
        SELECT k.id, ${orgId}, k.user_id, 'test', k.hash, 'lic_…' FROM unnest(${keyIds}::text[], ${userIds}::text[], ${hashes}::text[])
          AS k(id, user_id, hash)`
    }))
  return { orgId, userIds, keys }
}

const ruleCount = 50

/**
 * Enabled rules that every bench signal is evaluated against and none blocks: model filters on
 * models nobody uses, org budgets and per-user limits far above what a run spends (their
 * counters are read for every signal, org budgets from the shared scope counts), org policies
 * for unknown models. What it measures is the price of evaluation, not of acting.
 */
/** Waits until the service blocks the model the first seeded rule names (a signal not measured). */
const rulesInForce = async (port: number, key: string) => {
  for (let tries = 0; tries < 200; tries++) {
    const res = await fetch(`http://127.0.0.1:${port}/engine/v1/signals`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "post-tool", adapter: "bench", session_id: "rules-probe", metadata: { model: "unused-model-0" } })
    })
    if (((await res.json()) as { ok?: boolean }).ok === false) return
    await sleep(25)
  }
  throw new Error("the seeded rules never came into force")
}

const seedRules = (url: string, orgId: string) =>
  withDb(url, (sql) =>
    Effect.gen(function*() {
      const rules = Array.from({ length: ruleCount }, (_, i) => {
        const kind = i % 5
        const [type, condition, action] = kind === 0
          ? ["model_filter", { model: { in: [`unused-model-${i}`] } }, "block"]
          : kind === 1
          ? ["budget", { window: i % 2 ? "daily" : "monthly", metric: "cost_usd", threshold: 1e9 }, "warn"]
          : kind === 2
          ? ["budget", { window: "daily", metric: "tokens_total", threshold: 1e15 }, "notify"]
          : kind === 3
          ? ["user_limit", { window: "monthly", metric: "tokens_total", per_user: 1e15 }, "warn"]
          : ["org_policy", { block_unknown_models: true }, "log"]
        return {
          id: `rule_bench_${i}`, org_id: orgId, name: `bench ${i}`, type, scope: "org", scope_id: orgId, priority: i,
          condition: JSON.stringify(condition), action, action_config: JSON.stringify(action === "block" ? { message: "no" } : {})
        }
      })
      yield* sql`
        INSERT INTO rules (id, org_id, environment, name, type, scope, scope_id, priority, condition, action, action_config)
        SELECT id, org_id, 'test', name, type, scope, scope_id, priority, condition::jsonb, action, action_config::jsonb
        FROM jsonb_to_recordset(${JSON.stringify(rules)}::jsonb) AS r(id text, org_id text, name text, type text,
          scope text, scope_id text, priority integer, condition text, action text, action_config text)`
    }))

// ---------------------------------------------------------------- the service

interface Service {
  readonly port: number
  readonly pid: number
  /** Its output so far (stdout and stderr), as written to its log file. */
  readonly log: () => string
  readonly stop: () => Promise<void>
}

const logEnvFor = (log: LogName, id: string): Record<string, string> =>
  log === "kafka"
    ? { KAFKA_BROKERS: kafka!.brokers, KAFKA_TOPIC: `signals-${id}`, KAFKA_GROUP_ID: `signal-engine-${id}` }
    : {}

const startService = async (
  url: string,
  log: LogName,
  id: string,
  extra: Record<string, string> = {},
  nodeArgs: ReadonlyArray<string> = []
): Promise<Service> => {
  const port = await freePort()
  const profDir = join(dir, "profiles", id)
  if (options.cpuProf) mkdirSync(profDir, { recursive: true })
  const env: Record<string, string> = {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: "127.0.0.1",
    DEMO_BOOTSTRAP: "false",
    LOG_PARTITIONS: String(options.partitions),
    // The engine's throughput, not its per-key limits (the flood scenario turns them on).
    ENGINE_RATE_LIMIT_SCALE: "0",
    ...logEnvFor(log, id),
    ...extra
  }
  const nodeFlags = [...nodeArgs, ...(options.cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : [])]
  const started = startChild(0, `service-${id}`, [...nodeFlags, join(root, "bin", "signal-engine.js"), "serve"], env)
  await waitHttp(port, "/readyz", `the service (${log})`, started)
  return {
    port,
    pid: started.child.pid!,
    log: () => readFileSync(started.logFile, "utf8"),
    stop: async () => {
      await stopChild(started.child)
      if (options.cpuProf) {
        for (const f of readdirSync(profDir).filter((f) => f.endsWith(".cpuprofile"))) {
          profiles.push({ id, file: join(profDir, f), top: topSelfTime(join(profDir, f), 25) })
        }
      }
    }
  }
}

const profiles: Array<{ id: string; file: string; top: ReturnType<typeof topSelfTime> }> = []

// ---------------------------------------------------------------- scenarios

interface Row {
  readonly scenario: Scenario
  readonly log: LogName | "-"
  readonly figures: Record<string, number | string>
}
const rows: Array<Row> = []
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits

const throughputFigures = (r: LoadResult, serverCpuMs: number) => ({
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

const measured = async (pid: number, spec: LoadSpec) => {
  // The warm-up is inside the load generator; server CPU is counted over the whole call.
  const before = cpuMsOf(pid)
  const result = await load(spec)
  const serverCpuMs = cpuMsOf(pid) - before
  return { result, serverCpuMs: serverCpuMs * (result.seconds / (result.seconds + (spec.warmupS ?? 0))) }
}

let baselineRps: number | undefined

const httpBaseline = async () => {
  const port = await freePort()
  const started = startChild(0, "baseline-server", [join(root, "bench", "baseline-server.ts"), String(port)], {})
  await waitHttp(port, "/", "the baseline server", started)
  const spec: LoadSpec = {
    port,
    path: "/engine/v1/signals",
    keys: ["lic_00000000000000000000"],
    durationS: options.durationS,
    concurrency: options.concurrency,
    batch: 1,
    warmupS: options.warmupS
  }
  // Warmed up like the service, so the ceiling is not measured colder than what it is compared with.
  if (options.serverWarmupS > 0) await load({ ...spec, durationS: options.serverWarmupS, warmupS: 0 })
  const { result, serverCpuMs } = await measured(started.child.pid!, spec)
  await stopChild(started.child)
  baselineRps = result.requests / result.seconds
  rows.push({ scenario: "http_baseline", log: "-", figures: throughputFigures(result, serverCpuMs) })
}

/** Lag: ingest open-loop at `rate`; a poller sees probe signals land in `events`. */
const lag = async (service: Service, url: string, tenant: Tenant, rate: number, log: LogName) => {
  const probeUsers = tenant.userIds.slice(0, 20)
  const probeEvery = Math.max(1, Math.round(rate / 200))
  const rt = ManagedRuntime.make(databaseFromUrl(url))
  const seen = new Set<string>()
  const lags: Array<number> = []
  let polls = 0
  let polling = true
  const since0 = new Date(Date.now() - 5).toISOString()
  const poller = (async () => {
    let since = since0
    while (polling) {
      const found = await rt.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly probe: string; readonly ts: Date }>`
          SELECT metadata->>'probe' AS probe, ts FROM events
          WHERE org_id = ${tenant.orgId} AND environment = 'test' AND user_id = ANY(${probeUsers}::text[])
            AND ts >= ${since}::timestamptz AND metadata ? 'probe'`))
      const now = Date.now()
      polls += 1
      let newest = 0
      for (const row of found) {
        const ts = new Date(row.ts).getTime()
        newest = Math.max(newest, ts)
        if (seen.has(row.probe)) continue
        seen.add(row.probe)
        lags.push(now - ts)
      }
      // Batches of different partitions commit out of ts order; 2 s back is well past the lag.
      if (newest > 0) since = new Date(Math.max(Date.parse(since0), newest - 2_000)).toISOString()
      await sleep(5)
    }
  })()
  const started = Date.now()
  const { result, serverCpuMs } = await measured(service.pid, {
    port: service.port,
    path: "/engine/v1/signals",
    keys: tenant.keys,
    durationS: options.durationS,
    concurrency: Math.max(options.concurrency * 8, 256),
    rate,
    batch: 1,
    probeKeys: tenant.keys.slice(0, 20),
    probeEvery
  })
  await sleep(500)
  polling = false
  await poller
  await rt.dispose()
  const elapsed = Date.now() - started
  const sorted = lags.sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
  rows.push({
    scenario: "lag",
    log,
    figures: {
      target_signals_per_s: Math.round(rate),
      ...throughputFigures(result, serverCpuMs),
      dropped: result.dropped,
      probes_sent: result.probes,
      probes_seen: lags.length,
      lag_p50_ms: at(50),
      lag_p99_ms: at(99),
      lag_max_ms: sorted[sorted.length - 1] ?? 0,
      poll_period_ms: round(elapsed / Math.max(1, polls), 2)
    }
  })
}

const ingestScenarios = async (log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await newDatabase(`bench_ingest_${id}`)
  const tenant = await seedUsers(url, options.users)
  const service = await startService(url, log, id)
  // Closed-loop single-signal ingestion, as ingest and ingest_rules measure it.
  const ingestSpec: LoadSpec = {
    port: service.port,
    path: "/engine/v1/signals",
    keys: tenant.keys,
    durationS: options.durationS,
    concurrency: options.concurrency,
    batch: 1,
    warmupS: options.warmupS
  }
  const ingestLoad = () => measured(service.pid, ingestSpec)
  try {
    if (options.serverWarmupS > 0 && ingestGroup.some(wants)) {
      say(`warming up the service over ${log} (${options.serverWarmupS} s of ingest, not measured)`)
      await load({ ...ingestSpec, durationS: options.serverWarmupS, warmupS: 0 })
    }
    let maxRate: number | undefined
    if (wants("ingest") || wants("lag") || wants("ingest_keyed") || wants("ingest_rules")) {
      say(`ingest over ${log}`)
      const { result, serverCpuMs } = await ingestLoad()
      maxRate = result.signals / result.seconds
      if (wants("ingest")) {
        rows.push({
          scenario: "ingest",
          log,
          figures: {
            ...throughputFigures(result, serverCpuMs),
            ratio_to_http_baseline: baselineRps === undefined ? "n/a" : round(maxRate / baselineRps, 3)
          }
        })
      }
    }
    if (wants("ingest_batch")) {
      say(`ingest_batch over ${log}`)
      const { result, serverCpuMs } = await measured(service.pid, {
        port: service.port,
        path: "/engine/v1/signals/batch",
        keys: tenant.keys,
        durationS: options.durationS,
        concurrency: options.batchConcurrency,
        batch: options.batchSize,
        warmupS: options.warmupS
      })
      rows.push({ scenario: "ingest_batch", log, figures: { batch_size: options.batchSize, ...throughputFigures(result, serverCpuMs) } })
    }
    if (wants("lag") && maxRate !== undefined) {
      say(`lag over ${log} at 80% of ${Math.round(maxRate)} signals/s`)
      await lag(service, url, tenant, maxRate * 0.8, log)
    }
    if (wants("ingest_keyed")) {
      say(`ingest_keyed over ${log}: every request with an Idempotency-Key of its own`)
      const { result, serverCpuMs } = await measured(service.pid, { ...ingestSpec, idempotencyKeys: true })
      rows.push({
        scenario: "ingest_keyed",
        log,
        figures: {
          ...throughputFigures(result, serverCpuMs),
          duplicates: result.duplicates,
          ratio_to_ingest: maxRate === undefined ? "n/a" : round(result.signals / result.seconds / maxRate, 3)
        }
      })
    }
    if (wants("ingest_rules")) {
      say(`ingest_rules over ${log}: ${ruleCount} enabled rules`)
      await seedRules(url, tenant.orgId)
      // Rule changes are announced and reloaded at once: measure from when the first rule blocks.
      await rulesInForce(service.port, tenant.keys[0]!)
      const { result, serverCpuMs } = await ingestLoad()
      const rate = result.signals / result.seconds
      rows.push({
        scenario: "ingest_rules",
        log,
        figures: {
          rules: ruleCount,
          ...throughputFigures(result, serverCpuMs),
          ratio_to_ingest: maxRate === undefined ? "n/a" : round(rate / maxRate, 3)
        }
      })
    }
  } finally {
    await service.stop()
  }
}

/**
 * The service's live heap: a full garbage collection, then `process.memoryUsage().heapUsed`,
 * through the inspector protocol (the service runs with --inspect on loopback for this
 * scenario only). RSS keeps the heap's high-water mark after a burst (V8 holds on to its pages);
 * the live heap after a collection is what idle users actually retain.
 */
const heapAfterGc = async (inspectPort: number): Promise<number> => {
  const targets = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json() as ReadonlyArray<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true })
    socket.addEventListener("error", reject, { once: true })
  })
  let nextId = 0
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve) => {
      const id = ++nextId
      const onMessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data))
        if (message.id !== id) return
        socket.removeEventListener("message", onMessage)
        resolve(message.result)
      }
      socket.addEventListener("message", onMessage)
      socket.send(JSON.stringify({ id, method, params }))
    })
  try {
    await send("HeapProfiler.collectGarbage")
    await send("HeapProfiler.collectGarbage")
    const result = await send("Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true })
    return Number(result.result.value)
  } finally {
    socket.close()
  }
}

/**
 * How long the memory scenario leaves the service idle before measuring: at least past its idle
 * compaction (10 s), and until the service has logged it, up to a limit (a second that was busy
 * after the load starts its 10 s over).
 */
const idleWaitMs = smoke ? 1_000 : 15_000
const compactionWaitMs = smoke ? 1_000 : 60_000
/** Idle actors go after ACTOR_IDLE_TIMEOUT (1 s here), swept every second: far within this. */
const evictionWaitMs = 30_000

/** What the service's /readyz says of its actors. */
const actorsOf = async (port: number): Promise<{ readonly in_memory: number; readonly session_timers: number }> => {
  const body = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
    readonly checks: { readonly actors: { readonly in_memory: number; readonly session_timers: number } }
  }
  return body.checks.actors
}

/**
 * After a burst: waits until the service holds no actor in memory (every one evicted) and has
 * compacted its heap (or the wait ran out), then takes the idle RSS (the minimum of 5 samples).
 */
const settle = async (service: Service) => {
  const idleFrom = Date.now()
  const logFrom = service.log().length
  let compactedAfterS: number | undefined
  let evictedAfterS: number | undefined
  for (;;) {
    const elapsed = Date.now() - idleFrom
    if (evictedAfterS === undefined && (await actorsOf(service.port)).in_memory === 0) evictedAfterS = round(elapsed / 1000)
    if (compactedAfterS === undefined && service.log().slice(logFrom).includes("idle: heap compacted")) {
      compactedAfterS = round(elapsed / 1000)
    }
    if (evictedAfterS === undefined && elapsed > evictionWaitMs) {
      throw new Error(`memory: the service still holds ${(await actorsOf(service.port)).in_memory} actors after ${evictionWaitMs / 1000} s idle`)
    }
    const waiting = evictedAfterS === undefined || elapsed < idleWaitMs || (compactedAfterS === undefined && elapsed < compactionWaitMs)
    if (!waiting) break
    await sleep(250)
  }
  // The loop ends only once every actor is gone (or throws).
  const evicted = evictedAfterS!
  const samples: Array<number> = []
  for (let i = 0; i < 5; i++) {
    samples.push(rssOf(service.pid))
    await sleep(400)
  }
  return { rss: Math.min(...samples), evictedAfterS: evicted, compactedAfterS }
}

/**
 * Memory per idle user, as the issue frames it: every user has sent signals, its actor was evicted
 * when idle and reloaded from its snapshot by its next signal. Two rounds of one signal per user;
 * after each the service is left idle until every actor is evicted and the heap compacted. The
 * figures are those after the second round; the growth from the first to the second is what a
 * reload leaves behind (zero when nothing leaks: both rounds end with the same users, each with
 * one open session).
 */
const memory = async (log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await newDatabase(`bench_memory_${id}`)
  say(`memory over ${log}: seeding ${options.memoryUsers} users`)
  const tenant = await seedUsers(url, options.memoryUsers)
  const inspectPort = await freePort()
  const service = await startService(url, log, id, { ACTOR_IDLE_TIMEOUT: "1 second" }, [`--inspect=127.0.0.1:${inspectPort}`])
  const oncePerUser = () =>
    measured(service.pid, {
      port: service.port,
      path: "/engine/v1/signals",
      keys: tenant.keys,
      durationS: 0,
      concurrency: options.concurrency,
      batch: 1,
      oncePerKey: true
    })
  try {
    await sleep(2_000)
    const heapBaseline = await heapAfterGc(inspectPort)
    const baseline = rssOf(service.pid)
    say(`memory over ${log}: one signal from each user`)
    const { result: first } = await oncePerUser()
    const loaded = rssOf(service.pid)
    const firstIdle = await settle(service)
    const heapFirst = await heapAfterGc(inspectPort)
    say(`memory over ${log}: a second signal from each user (each actor reloaded from its snapshot)`)
    const { result: second } = await oncePerUser()
    const idle = await settle(service)
    // Each user's second signal went on in the session its first one started: the state came back.
    const reloaded = await withDb(url, (sql) =>
      Effect.map(
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM sessions WHERE org_id = ${tenant.orgId} AND signal_count = 2`,
        (rows) => rows[0]!.n
      ))
    if (reloaded !== options.memoryUsers) {
      throw new Error(`memory: ${reloaded} of ${options.memoryUsers} users' second signals went on in their first session`)
    }
    // What the idle node spends keeping 100,000 users' timers, caches and polls.
    const idleCpuFrom = cpuMsOf(service.pid)
    const idleCpuS = smoke ? 1 : 5
    await sleep(idleCpuS * 1000)
    const idleCpuPct = round(((cpuMsOf(service.pid) - idleCpuFrom) / (idleCpuS * 1000)) * 100)
    const heapIdle = await heapAfterGc(inspectPort)
    const perUser = (bytes: number) => Math.round(bytes / options.memoryUsers)
    rows.push({
      scenario: "memory",
      log,
      figures: {
        users: options.memoryUsers,
        signals_per_s: Math.round(first.signals / first.seconds),
        reload_signals_per_s: Math.round(second.signals / second.seconds),
        errors: first.errors + second.errors,
        pending: first.pending + second.pending,
        reloaded,
        rss_baseline_mb: round(baseline / 1048576),
        rss_loaded_mb: round(loaded / 1048576),
        rss_peak_mb: round(rssPeakOf(service.pid) / 1048576),
        rss_idle_first_mb: round(firstIdle.rss / 1048576),
        rss_idle_mb: round(idle.rss / 1048576),
        bytes_per_idle_user: perUser(idle.rss - baseline),
        reload_growth_bytes_per_user: perUser(idle.rss - firstIdle.rss),
        heap_baseline_mb: round(heapBaseline / 1048576),
        heap_idle_mb: round(heapIdle / 1048576),
        heap_bytes_per_idle_user: perUser(heapIdle - heapBaseline),
        heap_reload_growth_bytes_per_user: perUser(heapIdle - heapFirst),
        idle_cpu_pct: idleCpuPct,
        evicted_after_s: idle.evictedAfterS,
        // When the service logged its idle compaction, counted from the end of the load (absent:
        // not within the wait, so the idle figures are uncompacted ones).
        ...(idle.compactedAfterS === undefined ? {} : { compacted_after_s: idle.compactedAfterS })
      }
    })
  } finally {
    await service.stop()
  }
}

/** A log of `count` valid signal records of `users` users, written straight into signal_log. */
const fillPgLog = async (url: string, tenant: Tenant, count: number) => {
  const parts = tenant.userIds.map((u) => partitionForKey(u, options.partitions))
  await withDb(url, (sql) =>
    Effect.gen(function*() {
      yield* sql`
        INSERT INTO signal_log (partition, "offset", key, record)
        SELECT g.partition, row_number() OVER (PARTITION BY g.partition ORDER BY g.i) - 1, g.user_id, jsonb_build_object(
          'v', 1, 'kind', 'signal', 'org_id', ${tenant.orgId}::text, 'environment', 'test', 'user_id', g.user_id,
          'ts', to_char((timestamptz '2026-01-01 00:00:00+00' + g.i * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'signal_id', 'sig_' || lpad(to_hex(g.i), 32, '0'),
          'type', CASE WHEN g.i % 10 = 0 THEN 'user-prompt' ELSE 'post-tool' END,
          'adapter', 'claude-code', 'client_session_id', 'replay-' || g.u,
          'metadata', jsonb_build_object('model', 'claude-sonnet-4', 'tokens_in', 1000, 'tokens_out', 100,
            'latency_ms', 400, 'project_id', 'proj_1', 'tool', 'Edit'),
          'session_timeout_s', 1800,
          'cost', jsonb_build_object('usd', 0.0045, 'estimated', true, 'model_known', true))
        FROM (
          SELECT i, (i % ${tenant.userIds.length}) AS u, users.user_id, users.partition
          FROM generate_series(0, ${count - 1}::int8) AS i
          JOIN unnest(${tenant.userIds}::text[], ${parts}::int4[]) WITH ORDINALITY AS users(user_id, partition, n)
            ON users.n = (i % ${tenant.userIds.length}) + 1
        ) AS g`
      yield* sql`
        INSERT INTO signal_log_heads (partition, next_offset)
        SELECT p, coalesce((SELECT count(*) FROM signal_log WHERE partition = p), 0)
        FROM generate_series(0, ${options.partitions - 1}::int4) AS p
        ON CONFLICT (partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`
    }))
}

/** The same records produced to a new topic (kafkajs, batches of 5,000). */
const fillKafkaLog = async (topic: string, tenant: Tenant, count: number) => {
  patchKafkajs()
  const client = new Kafka({ clientId: "signal-engine-bench", brokers: [kafka!.brokers], logLevel: logLevel.ERROR })
  const kafkaAdmin = client.admin()
  await kafkaAdmin.connect()
  // The settings the service creates its topic with (it warns about a topic that deletes records).
  const configEntries = [{ name: "retention.ms", value: "-1" }, { name: "retention.bytes", value: "-1" }]
  await kafkaAdmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: options.partitions, replicationFactor: 1, configEntries }] })
  await kafkaAdmin.disconnect()
  const producer = client.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const base = Date.parse("2026-01-01T00:00:00Z")
  const parts = tenant.userIds.map((u) => partitionForKey(u, options.partitions))
  for (let start = 0; start < count; start += 5_000) {
    const messages = []
    for (let i = start; i < Math.min(count, start + 5_000); i++) {
      const u = i % tenant.userIds.length
      const user = tenant.userIds[u]!
      messages.push({
        key: user,
        partition: parts[u]!,
        value: JSON.stringify({
          v: 1, kind: "signal", org_id: tenant.orgId, environment: "test", user_id: user,
          ts: new Date(base + i).toISOString(), signal_id: `sig_${i.toString(16).padStart(32, "0")}`,
          type: i % 10 === 0 ? "user-prompt" : "post-tool", adapter: "claude-code", client_session_id: `replay-${u}`,
          metadata: { model: "claude-sonnet-4", tokens_in: 1000, tokens_out: 100, latency_ms: 400, project_id: "proj_1", tool: "Edit" },
          session_timeout_s: 1800, cost: { usd: 0.0045, estimated: true, model_known: true }
        })
      })
    }
    await producer.send({ topic, acks: 1, messages })
  }
  await producer.disconnect()
}

const replayScenario = async (log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await newDatabase(`bench_replay_${id}`)
  const tenant = await seedUsers(url, options.users)
  say(`replay over ${log}: writing ${options.replayRecords} records`)
  const fillStarted = Date.now()
  const env: Record<string, string> = { DATABASE_URL: url, LOG_PARTITIONS: String(options.partitions), ...logEnvFor(log, id) }
  if (log === "pg") await fillPgLog(url, tenant, options.replayRecords)
  else await fillKafkaLog(`signals-${id}`, tenant, options.replayRecords)
  const fillS = (Date.now() - fillStarted) / 1000

  say(`replay over ${log}: raw read`)
  // With --cpu-prof the raw read is profiled too: what replay adds is the difference of the two.
  const profileFlags = (id: string) => {
    if (!options.cpuProf) return []
    const profDir = join(dir, "profiles", id)
    mkdirSync(profDir, { recursive: true })
    return ["--cpu-prof", `--cpu-prof-dir=${profDir}`]
  }
  const collectProfiles = (id: string) => {
    if (!options.cpuProf) return
    const profDir = join(dir, "profiles", id)
    for (const f of readdirSync(profDir).filter((f) => f.endsWith(".cpuprofile"))) {
      profiles.push({ id, file: join(profDir, f), top: topSelfTime(join(profDir, f), 25) })
    }
  }
  const rawRead = async (profiled: boolean) => {
    const flags = profiled ? profileFlags(`raw-read-${log}`) : []
    const [rawCmd, rawArgs] = pinned(0, node, [...flags, join(root, "bench", "read-raw.ts")])
    const { stdout } = await run(rawCmd, rawArgs, { cwd: root, env: { ...baseEnv, ...env } })
    return JSON.parse(stdout.trim().split("\n").pop()!) as { records: number; seconds: number; cpu_s: number; gc_s: number }
  }
  // The baseline is read before and after the replay, and their mean is the one compared with
  // it: this VM's speed drifts over minutes, and the two readings bracket the replay in time.
  const rawBefore = await rawRead(true)
  collectProfiles(`raw-read-${log}`)

  const replayCli = async (profiled: boolean) => {
    const flags = profiled ? profileFlags(`replay-${log}`) : []
    const [cmd, args] = pinned(0, node, [...flags, join(root, "bin", "signal-engine.js"), "replay"])
    const started = Date.now()
    const { stdout } = await run(cmd, args, { cwd: root, env: { ...baseEnv, ...env }, maxBuffer: 64 * 1024 * 1024 })
    const wallS = (Date.now() - started) / 1000
    const match = /replayed (\d+) records of \d+ partition\(s\) in ([\d.]+) s/.exec(stdout)
    if (!match) throw new Error(`unexpected replay output: ${stdout}`)
    const indexS = /read indexes built in ([\d.]+) s/.exec(stdout)?.[1]
    const cpuS = /([\d.]+) s of CPU in this process/.exec(stdout)?.[1]
    const gcS = /([\d.]+) s of it paused for garbage collection/.exec(stdout)?.[1]
    return {
      records: Number(match[1]),
      seconds: Number(match[2]),
      wallS,
      indexS: indexS === undefined ? undefined : Number(indexS),
      cpuS: cpuS === undefined ? undefined : Number(cpuS),
      gcS: gcS === undefined ? undefined : Number(gcS)
    }
  }
  say(`replay over ${log}: signal-engine replay`)
  const first = await replayCli(true)
  collectProfiles(`replay-${log}`)
  // What an SRE runs: a rebuild over the projections already there (the first replay's).
  say(`replay over ${log}: signal-engine replay again, over its projections`)
  const again = await replayCli(false)
  const replayed = first.records
  const seconds = first.seconds
  say(`replay over ${log}: raw read again`)
  const rawAfter = await rawRead(false)
  const raw = {
    records: rawBefore.records,
    seconds: (rawBefore.seconds + rawAfter.seconds) / 2,
    cpu_s: (rawBefore.cpu_s + rawAfter.cpu_s) / 2,
    gc_s: (rawBefore.gc_s + rawAfter.gc_s) / 2
  }
  const rawRate = raw.records / raw.seconds
  const replayRate = replayed / seconds
  rows.push({
    scenario: "replay",
    log,
    figures: {
      records: replayed,
      signals_per_s: Math.round(replayRate),
      raw_read_per_s: Math.round(rawRate),
      ratio_to_raw_read: round(replayRate / rawRate, 3),
      replay_s: seconds,
      replay_wall_s: round(first.wallS),
      // Of replay_s: the read indexes' build at the end (the database's work; this process waits).
      ...(first.indexS === undefined ? {} : { index_build_s: first.indexS }),
      // The replay process's own CPU, start-up included: how much of its core it kept busy.
      ...(first.cpuS === undefined ? {} : { replay_cpu_s: first.cpuS }),
      // Of it, the main thread's pauses for garbage collection (the raw read's: raw_read_gc_s).
      ...(first.gcS === undefined ? {} : { replay_gc_s: first.gcS }),
      // The same replay run again over the projections the first one wrote (a rebuild).
      rebuild_per_s: Math.round(again.records / again.seconds),
      rebuild_ratio_to_raw_read: round(again.records / again.seconds / rawRate, 3),
      rebuild_s: again.seconds,
      raw_read_s: round(raw.seconds, 2),
      raw_read_cpu_s: round(raw.cpu_s),
      raw_read_gc_s: round(raw.gc_s, 2),
      // How far apart the two raw reads were, relative to their mean: the VM's drift meanwhile.
      raw_read_spread: round(Math.abs(rawBefore.seconds - rawAfter.seconds) / raw.seconds, 3),
      fill_s: round(fillS)
    }
  })
}

/** A coding tool's wait per hook event: the adapter process against a service over this log. */
const hookScenario = async (log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await newDatabase(`bench_hook_${id}`)
  const tenant = await seedUsers(url, 1)
  const service = await startService(url, log, id)
  try {
    say(`hook over ${log}: ${options.hookRuns} runs per event, alternating with a bare node start`)
    const results = await hookLatency({ baseUrl: `http://127.0.0.1:${service.port}`, licenseKey: tenant.keys[0]!, runs: options.hookRuns, say })
    for (const { event, ...figures } of results) rows.push({ scenario: "hook", log, figures: { event, ...figures } })
  } finally {
    await service.stop()
  }
}

/**
 * One key of another org flooding (500-signal batches, a new adapter for every signal, two in
 * flight) beside normal users (one signal a request, four in flight): the normal users' latency
 * alone, beside the flood with the engine's limits as shipped, and beside it with them off.
 */
const flood = async (log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await newDatabase(`bench_flood_${id}`)
  const tenant = await seedUsers(url, options.users)
  const flooder = await seedUsers(url, 1, "flooder")
  const phases = async (scale: string, withAlone: boolean) => {
    const service = await startService(url, log, `${id}-${scale}`, { ENGINE_RATE_LIMIT_SCALE: scale })
    try {
      const normal: LoadSpec = {
        port: service.port, path: "/engine/v1/signals", keys: tenant.keys, durationS: options.durationS, concurrency: 4, batch: 1,
        warmupS: options.warmupS
      }
      say(`flood over ${log} (limits x${scale}): normal users alone`)
      const alone = withAlone ? await load(normal) : undefined
      say(`flood over ${log} (limits x${scale}): normal users beside a flooding key`)
      const [beside, flooded] = await Promise.all([
        load(normal),
        load({
          port: service.port, path: "/engine/v1/signals/batch", keys: flooder.keys, durationS: options.durationS + options.warmupS,
          concurrency: 2, batch: 500, distinctAdapters: true
        })
      ])
      return { alone, beside, flooded }
    } finally {
      await service.stop()
    }
  }
  const limited = await phases("1", true)
  const unlimited = await phases("0", false)
  const alone = limited.alone!.latencyMs
  rows.push({
    scenario: "flood",
    log,
    figures: {
      p99_alone_ms: round(alone.p99, 2),
      p99_beside_flood_ms: round(limited.beside.latencyMs.p99, 2),
      p99_ratio: round(limited.beside.latencyMs.p99 / alone.p99, 2),
      p99_beside_unlimited_flood_ms: round(unlimited.beside.latencyMs.p99, 2),
      p99_ratio_unlimited: round(unlimited.beside.latencyMs.p99 / alone.p99, 2),
      normal_errors: limited.beside.errors,
      flood_signals_taken: limited.flooded.signals,
      flood_requests_refused: limited.flooded.errorKinds["status 429 rate_limited"] ?? 0,
      unlimited_flood_signals_taken: unlimited.flooded.signals
    }
  })
}

// ---------------------------------------------------------------- main

const machine = {
  nproc: cpus().length,
  cpu: /model name\s*:\s*(.*)/.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? cpus()[0]?.model ?? "unknown",
  memory_gb: round(totalmem() / 1024 ** 3),
  node: process.version,
  taskset: hasTaskset
}

let failed = false
try {
  if (options.logs.includes("kafka") && options.scenarios.some((s) => s !== "http_baseline")) kafka = await kafkaEnv()
  if (wants("http_baseline")) {
    say("http_baseline")
    await httpBaseline()
  }
  for (const log of options.logs) {
    if (ingestGroup.some(wants)) await ingestScenarios(log)
    if (wants("replay")) await replayScenario(log)
    if (wants("memory")) await memory(log)
    if (wants("hook")) await hookScenario(log)
    if (wants("flood")) await flood(log)
  }
} catch (error) {
  failed = true
  console.error("bench: failed:", error)
} finally {
  await cleanup()
}

// ---------------------------------------------------------------- report

const table = () => {
  const lines: Array<string> = []
  lines.push(`machine: ${machine.nproc} cores, ${machine.cpu}, ${machine.memory_gb} GB, node ${machine.node}, taskset ${machine.taskset ? "yes" : "no"}`)
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

if (flags.json) {
  process.stderr.write(`${table()}\n`)
  process.stdout.write(`${JSON.stringify({ machine, options, failed, results: rows, profiles: profiles.map((p) => ({ id: p.id, top: p.top })) })}\n`)
} else {
  process.stdout.write(`${table()}\n`)
}
process.exit(failed ? 1 : 0)
