/**
 * lag: ingest open-loop at a given rate (80% of the ingest just measured); one request in
 * ~rate/200 comes from one of 20 probe users, and a poller sees those probe signals land in
 * `events`. Lag = when first seen - the event's `ts` (stamped at acceptance, same clock).
 */
import { setTimeout as sleep } from "node:timers/promises"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { databaseFromUrl } from "../../src/store/database.ts"
import type { Bench } from "../context.ts"
import { round, throughputFigures } from "../measure.ts"
import { type LogName, options } from "../options.ts"
import type { Tenant } from "../seed.ts"
import type { Service } from "../service.ts"

export const lag = async (bench: Bench, service: Service, url: string, tenant: Tenant, rate: number, log: LogName) => {
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
  const { result, serverCpuMs } = await bench.measured(service.pid, {
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
  bench.record({
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
