import { Config, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { createServer, type Server } from "node:http"
import { collectDefaultMetrics } from "prom-client"
import { AppConfig } from "../config.ts"
import { Engine } from "../engine/engine.ts"
import { VerdictRegistry } from "../engine/verdicts.ts"
import { SignalLog } from "../log/signal-log.ts"
import { poolConfig } from "../store/database.ts"
import { Metrics } from "./metrics.ts"

/** METRICS_PORT (unset: no metrics listener) and METRICS_HOST (default HOST). */
export const MetricsPort = Config.option(Config.Port("METRICS_PORT"))

/**
 * `GET /metrics` in Prometheus' text format, on its own port (METRICS_PORT), without
 * credentials: the port is for the cluster's Prometheus, not for the balancer (see README). The
 * gauges of state are read at each scrape: pending verdicts, owned partitions with their lag
 * (the log's end offset minus the next offset to fold), actors and session timers; the webhook
 * backlog, failing webhooks and the service's database connections (one statement). The
 * process' own figures (CPU, memory, event loop delay, GC) are prom-client's defaults.
 */
export const MetricsServer = Layer.unwrap(
  Effect.gen(function*() {
    const port = yield* MetricsPort
    if (Option.isNone(port)) return Layer.empty
    const host = yield* Config.String("METRICS_HOST").pipe(Config.withDefault((yield* AppConfig).host))
    return Layer.effectDiscard(serveMetrics(port.value, host))
  }).pipe(Effect.orDie)
)

const serveMetrics = (port: number, host: string) =>
  Effect.gen(function*() {
    const metrics = yield* Metrics
    const engine = yield* Engine
    const log = yield* SignalLog
    const verdicts = yield* VerdictRegistry
    const sql = yield* SqlClient.SqlClient
    collectDefaultMetrics({ register: metrics.registry })
    metrics.dbPoolMax.set(poolConfig.maxConnections)

    const refresh = Effect.gen(function*() {
      metrics.pendingVerdicts.set(verdicts.waiting())
      const partitions = yield* engine.partitions
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

    const context = yield* Effect.context<never>()
    const scrape = () => Effect.runPromiseWith(context)(Effect.andThen(refresh, Effect.promise(() => metrics.registry.metrics())))

    const server = yield* Effect.acquireRelease(
      Effect.callback<Server>((resume) => {
        const server = createServer((req, res) => {
          const path = (req.url ?? "/").split("?")[0]
          if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
            res.writeHead(404, { "content-type": "text/plain" }).end("only GET /metrics is served on this port\n")
            return
          }
          scrape().then(
            (body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(req.method === "HEAD" ? undefined : body),
            (error: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`metrics failed: ${String(error)}\n`)
          )
        })
        server.once("error", (error: NodeJS.ErrnoException) =>
          resume(Effect.die(
            error.code === "EADDRINUSE"
              ? `METRICS_PORT ${port} is already in use on ${host}: choose another port, or stop what listens there`
              : `the metrics listener could not start on ${host}:${port}: ${error.message}`
          )))
        server.listen(port, host, () => resume(Effect.succeed(server)))
      }),
      (server) => Effect.callback<void>((resume) => void server.close(() => resume(Effect.void)))
    )
    const address = server.address()
    const shown = typeof address === "object" && address !== null ? `${address.address}:${address.port}` : `${host}:${port}`
    yield* Effect.logInfo(`metrics on http://${shown}/metrics`)
  })
