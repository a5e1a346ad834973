import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { Processor } from "./engine/processor.ts"
import { VerdictRegistry } from "./engine/verdicts.ts"
import { SignalLog } from "./log/signal-log.ts"
import { Metrics } from "./observability/metrics.ts"
import { poolConfig } from "./store/database.ts"

/**
 * The gauges of state, read at each scrape of `GET /metrics`: pending verdicts, owned partitions
 * with their lag (the log's end offset minus the next offset to fold), actors and session timers;
 * the webhook backlog, failing webhooks and the service's database connections (one statement).
 * Here, beside the wiring, because it reads the engine, the log and the store: the listener
 * (src/observability/metrics-server.ts) knows none of them.
 */
export const refreshStateGauges = Effect.gen(function*() {
  const metrics = yield* Metrics
  const processor = yield* Processor
  const log = yield* SignalLog
  const verdicts = yield* VerdictRegistry
  const sql = yield* SqlClient.SqlClient
  metrics.dbPoolMax.set(poolConfig.maxConnections)
  return Effect.gen(function*() {
    metrics.pendingVerdicts.set(verdicts.waiting())
    const partitions = yield* processor.partitions
    metrics.partitionsOwned.set(partitions.length)
    metrics.partitionsFailing.set(partitions.filter((p) => p.failing !== undefined).length)
    // Reset first: a partition this node gave up has no figures any more.
    metrics.actors.reset()
    metrics.sessionTimers.reset()
    metrics.uncommittedRecords.reset()
    metrics.consumerLag.reset()
    for (const p of partitions) {
      metrics.actors.set({ partition: String(p.partition) }, p.actors)
      metrics.sessionTimers.set({ partition: String(p.partition) }, p.timers)
      metrics.uncommittedRecords.set({ partition: String(p.partition) }, p.uncommitted)
    }
    const ends = yield* log.endOffsets.pipe(Effect.timeout("2 seconds"), Effect.option)
    if (Option.isSome(ends)) {
      for (const p of partitions) {
        const end = ends.value[p.partition]
        if (end !== undefined) metrics.consumerLag.set({ partition: String(p.partition) }, Math.max(0, end - p.next_offset))
      }
    }
    const rows = yield* sql<{ backlog: number; failing: number; connections: Record<string, number> }>`
      SELECT
        (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS backlog,
        (SELECT count(*) FROM webhooks WHERE failing)::int AS failing,
        (SELECT coalesce(json_object_agg(state, n), '{}'::json) FROM (
          SELECT coalesce(state, 'unknown') AS state, count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = ${poolConfig.applicationName} GROUP BY 1) s) AS connections`.pipe(
      Effect.timeout("2 seconds"),
      Effect.option
    )
    if (Option.isSome(rows) && rows.value[0] !== undefined) {
      const row = rows.value[0]
      metrics.webhookBacklog.set(row.backlog)
      metrics.webhooksFailing.set(row.failing)
      metrics.dbConnections.reset()
      for (const [state, n] of Object.entries(row.connections)) metrics.dbConnections.set({ state }, n)
    }
  })
})
