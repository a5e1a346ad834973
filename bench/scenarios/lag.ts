/**
 * lag: ingest open-loop at a share (50%, 80%) of the ingest just measured, one row each (lag_50,
 * lag_80). The verdict latency is each request's, from its scheduled send to the answer carrying
 * the verdict (bench/loadgen.ts openLoop). One request in ~rate/200 comes from one of 20 probe
 * users, and a poller sees those probe signals land in `events`: commit lag = when first seen -
 * the event's `ts` (stamped at acceptance, same clock).
 */
import { setTimeout as sleep } from "node:timers/promises"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { databaseFromUrl } from "../../src/store/database.ts"
import type { Bench } from "../context.ts"
import { cpuFigures, round } from "../measure.ts"
import { type LogName, options } from "../options.ts"
import type { Tenant } from "../seed.ts"
import type { Service } from "../service.ts"
import { type Scrape, scrapeOrEmpty, stageFigures } from "../stages.ts"

/** `percent` of `maxRate` (ingest's signals/s), whose `ratioToBaseline` the row carries. */
export interface LagLoad {
  readonly percent: 50 | 80
  readonly maxRate: number
  readonly ratioToBaseline: number | "n/a"
}

/**
 * The open loop's cap on requests in flight (sends over it are `dropped`), one connection each:
 * the ingest group's service admits that many from the generator's one address.
 */
export const lagInFlight = Math.max(options.concurrency * 8, 256)

/** One signal a request at `rate`, whatever the answers, for the measured duration. */
export const openLoop = (service: Service, tenant: Tenant, rate: number) => ({
  port: service.port,
  path: "/engine/v1/signals",
  keys: tenant.keys,
  durationS: options.durationS,
  concurrency: lagInFlight,
  rate,
  batch: 1,
  newConnections: options.connectionPerRequest
})

export const lag = async (bench: Bench, service: Service, url: string, tenant: Tenant, load: LagLoad, log: LogName) => {
  const rate = (load.maxRate * load.percent) / 100
  const probeUsers = tenant.userIds.slice(0, 20)
  const probeEvery = Math.max(1, Math.round(rate / 200))
  const rt = ManagedRuntime.make(databaseFromUrl(url))
  const seen = new Set<string>()
  const lags: Array<number> = []
  let polls = 0
  let polling = true
  // The poller's own backends: their CPU is the harness's, not the database's cost of the signals.
  const pollerBackends = new Set<number>()
  let firstPoll = () => {}
  const polled = new Promise<void>((done) => (firstPoll = done))
  const since0 = new Date(Date.now() - 5).toISOString()
  const poller = (async () => {
    let since = since0
    while (polling) {
      // One row at least, so every poll names its backend.
      const found = await rt.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ readonly backend: number; readonly probe: string | null; readonly ts: Date | null }>`
          SELECT pg_backend_pid() AS backend, e.probe, e.ts FROM (SELECT 1) AS one LEFT JOIN LATERAL (
            SELECT metadata->>'probe' AS probe, ts FROM events
            WHERE org_id = ${tenant.orgId} AND environment = 'test' AND user_id = ANY(${probeUsers}::text[])
              AND ts >= ${since}::timestamptz AND metadata ? 'probe'
          ) AS e ON true`)
      )
      const now = Date.now()
      polls += 1
      let newest = 0
      for (const row of found) {
        pollerBackends.add(Number(row.backend))
        if (row.probe === null || row.ts === null) continue
        const ts = new Date(row.ts).getTime()
        newest = Math.max(newest, ts)
        if (seen.has(row.probe)) continue
        seen.add(row.probe)
        lags.push(now - ts)
      }
      // Batches of different partitions commit out of ts order; 2 s back is well past the lag.
      if (newest > 0) since = new Date(Math.max(Date.parse(since0), newest - 2_000)).toISOString()
      firstPoll()
      await sleep(5)
    }
  })()
  await Promise.race([polled, poller])
  const started = Date.now()
  let stagesBefore: Promise<Scrape> | undefined
  let stagesAfter: Promise<Scrape> | undefined
  const { result, cpu } = await bench.measured(
    service.pid,
    {
      ...openLoop(service, tenant, rate),
      probeKeys: tenant.keys.slice(0, 20),
      probeEvery
    },
    () => pollerBackends,
    {
      started: () => void (stagesBefore = scrapeOrEmpty(service.metricsPort)),
      ended: () => void (stagesAfter = scrapeOrEmpty(service.metricsPort))
    }
  )
  const stages = stagesBefore && stagesAfter ? stageFigures(await stagesBefore, await stagesAfter) : {}
  await sleep(500)
  polling = false
  await poller
  await rt.dispose()
  const elapsed = Date.now() - started
  const sorted = lags.sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
  const ms = (v: number) => round(v, 2)
  bench.record({
    scenario: `lag_${load.percent}`,
    log,
    figures: {
      target_signals_per_s: Math.round(rate),
      signals_per_s: Math.round(result.signals / result.seconds),
      requests_per_s: Math.round(result.requests / result.seconds),
      verdict_p50_ms: ms(result.latencyMs.p50),
      verdict_p99_ms: ms(result.latencyMs.p99),
      verdict_p999_ms: ms(result.latencyMs.p999),
      verdict_max_ms: ms(result.latencyMs.max),
      errors: result.errors,
      refused: result.refused,
      pending: result.pending,
      dropped: result.dropped,
      over_3s: result.overAdapterTimeout,
      send_late_p50_ms: ms(result.sendLateMs.p50),
      send_late_p99_ms: ms(result.sendLateMs.p99),
      new_connections: result.newConnections,
      slowest_on_new_connections: round(result.slowestOnNewConnections, 3),
      ratio_to_http_baseline: load.ratioToBaseline,
      probes_sent: result.probes,
      probes_seen: lags.length,
      lag_p50_ms: at(50),
      lag_p99_ms: at(99),
      lag_max_ms: sorted[sorted.length - 1] ?? 0,
      poll_period_ms: round(elapsed / Math.max(1, polls), 2),
      ...cpuFigures(result, cpu, log),
      ...stages
    }
  })
}
