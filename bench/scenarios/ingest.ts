/**
 * The ingest group, measured one after the other against one service over one log: ingest
 * (closed loop, one signal a request), ingest_batch, lag at 50% and 80% of that ingest, ingest_keyed
 * (an Idempotency-Key on every request), ingest_rules (50 enabled rules) and ingest_otlp (Claude
 * Code's api_request events over OTLP/HTTP, a batch a request).
 */
import { randomBytes } from "node:crypto"
import type { Bench } from "../context.ts"
import type { LoadSpec } from "../loadgen.ts"
import { cpuFigures, round, throughputFigures } from "../measure.ts"
import { ingestGroup, type LogName, options, wants } from "../options.ts"
import { say } from "../say.ts"
import { ruleCount, rulesInForce, seedRules, seedUsers } from "../seed.ts"
import { startService } from "../service.ts"
import { storageBaseline, storageFigures } from "../storage.ts"
import { lag, lagInFlight } from "./lag.ts"
import { slo } from "./slo.ts"

/** `baselineRps`: http_baseline's requests per second in this run, when it was measured. */
export const ingestScenarios = async (bench: Bench, log: LogName, baselineRps: number | undefined) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await bench.database.newDatabase(`bench_ingest_${id}`)
  const tenant = await seedUsers(url, options.users)
  const emptyDatabase = await storageBaseline(url)
  // The generator is one address standing for many clients: over the per-client connection cap
  // (256 as shipped), lag's open loop would get 429s where its queueing should show as latency.
  const service = await startService(bench, url, log, id, { MAX_CONNECTIONS_PER_CLIENT: String(lagInFlight * 2) })
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
  const ingestLoad = () => bench.measured(service.pid, ingestSpec)
  try {
    if (options.serverWarmupS > 0 && ingestGroup.some(wants)) {
      say(`warming up the service over ${log} (${options.serverWarmupS} s of ingest, not measured)`)
      await bench.load({ ...ingestSpec, durationS: options.serverWarmupS, warmupS: 0 })
    }
    let maxRate: number | undefined
    let ratioToBaseline: number | "n/a" = "n/a"
    if (wants("ingest") || wants("lag") || wants("slo") || wants("ingest_keyed") || wants("ingest_rules")) {
      say(`ingest over ${log}`)
      const { result, serverCpuMs, cpu } = await ingestLoad()
      maxRate = result.signals / result.seconds
      if (baselineRps !== undefined) ratioToBaseline = round(maxRate / baselineRps, 3)
      if (wants("ingest")) {
        bench.record({
          scenario: "ingest",
          log,
          figures: {
            ...throughputFigures(result, serverCpuMs),
            ratio_to_http_baseline: ratioToBaseline,
            ...cpuFigures(result, cpu, log)
          }
        })
      }
    }
    if (wants("ingest_batch")) {
      say(`ingest_batch over ${log}`)
      const { result, serverCpuMs } = await bench.measured(service.pid, {
        port: service.port,
        path: "/engine/v1/signals/batch",
        keys: tenant.keys,
        durationS: options.durationS,
        concurrency: options.batchConcurrency,
        batch: options.batchSize,
        warmupS: options.warmupS
      })
      bench.record({ scenario: "ingest_batch", log, figures: { batch_size: options.batchSize, ...throughputFigures(result, serverCpuMs) } })
    }
    if (wants("ingest_otlp")) {
      say(`ingest_otlp over ${log}: OTLP/HTTP protobuf, ${options.batchSize} Claude Code api_request events a request`)
      const { result, serverCpuMs } = await bench.measured(service.pid, {
        port: service.port,
        path: "/engine/v1/otlp/v1/logs",
        keys: tenant.keys,
        durationS: options.durationS,
        concurrency: options.batchConcurrency,
        batch: options.batchSize,
        warmupS: options.warmupS,
        otlp: true
      })
      bench.record({
        scenario: "ingest_otlp",
        log,
        figures: {
          batch_size: options.batchSize,
          ...throughputFigures(result, serverCpuMs),
          server_cpu_us_per_record: result.signals === 0 ? "n/a" : round((serverCpuMs * 1000) / result.signals, 1)
        }
      })
    }
    if (wants("lag") && maxRate !== undefined) {
      for (const percent of [50, 80] as const) {
        say(`lag over ${log} at ${percent}% of ${Math.round(maxRate)} signals/s`)
        await lag(bench, service, url, tenant, { percent, maxRate, ratioToBaseline }, log)
      }
    }
    if (wants("slo") && maxRate !== undefined) await slo(bench, service, tenant, { maxRate, baselineRps }, log)
    if (wants("ingest_keyed")) {
      say(`ingest_keyed over ${log}: every request with an Idempotency-Key of its own`)
      const { result, serverCpuMs } = await bench.measured(service.pid, { ...ingestSpec, idempotencyKeys: true })
      bench.record({
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
      bench.record({
        scenario: "ingest_rules",
        log,
        figures: {
          rules: ruleCount,
          ...throughputFigures(result, serverCpuMs),
          ratio_to_ingest: maxRate === undefined ? "n/a" : round(rate / maxRate, 3)
        }
      })
    }
    // Every signal the group sent is in the database by now: what it occupies there.
    if (wants("storage")) bench.record({ scenario: "storage", log, figures: await storageFigures(url, emptyDatabase) })
  } finally {
    await service.stop()
  }
}
