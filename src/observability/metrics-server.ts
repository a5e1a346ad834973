import { Config, Effect, Layer, Option } from "effect"
import { createServer, type Server } from "node:http"
import { collectDefaultMetrics } from "prom-client"
import { AppConfig } from "../config.ts"
import { Metrics } from "./metrics.ts"

/** METRICS_PORT (unset: no metrics listener) and METRICS_HOST (default HOST). */
export const MetricsPort = Config.option(Config.Port("METRICS_PORT"))

/**
 * `GET /metrics` in Prometheus' text format, on its own port (METRICS_PORT), without
 * credentials: the port is for the cluster's Prometheus, not for the balancer (see README).
 * `refresh` sets the gauges of state before each scrape (the wiring gives it: src/state-gauges.ts);
 * the process' own figures (CPU, memory, event loop delay, GC) are prom-client's defaults.
 */
export const metricsServer = <R>(refresh: Effect.Effect<Effect.Effect<void, never, R>, never, R>) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const port = yield* MetricsPort
      if (Option.isNone(port)) return Layer.empty
      const host = yield* Config.String("METRICS_HOST").pipe(Config.withDefault((yield* AppConfig).host))
      return Layer.effectDiscard(Effect.flatMap(refresh, (gauges) => serveMetrics(port.value, host, gauges)))
    }).pipe(Effect.orDie)
  )

const serveMetrics = <R>(port: number, host: string, refresh: Effect.Effect<void, never, R>) =>
  Effect.gen(function*() {
    const metrics = yield* Metrics
    collectDefaultMetrics({ register: metrics.registry })

    const context = yield* Effect.context<R>()
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
