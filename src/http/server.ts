import { NodeHttpServer } from "@effect/platform-node"
import { ByteSize, Effect, Layer, Option } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { createServer as createHttpServer, type Server } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { AppConfig } from "../config.ts"
import { ServiceUnavailable, envelopeOf } from "../domain/errors.ts"
import { SignalLog } from "../log/signal-log.ts"
import { schemaIsCurrent } from "../store/database.ts"
import { EngineAuthLive, ManagementAuthLive } from "./auth.ts"
import { EngineApi } from "./engine/api.ts"
import { EngineHandlers } from "./engine/handlers.ts"
import { EnvelopeLive } from "./envelope.ts"
import { gateway } from "./gateway.ts"
import { ManagementApi } from "./management/api.ts"
import { ManagementHandlers } from "./management/handlers.ts"
import { RequestId } from "./request-id.ts"
import { makeRouteTable } from "./route-table.ts"

export const openApiPaths = {
  management: "/api/v1/openapi.json",
  engine: "/engine/v1/openapi.json"
} as const

const healthRoutes = [
  { method: "GET", path: "/healthz" },
  { method: "GET", path: "/readyz" },
  { method: "GET", path: openApiPaths.management },
  { method: "GET", path: openApiPaths.engine }
]

/** Liveness: the process serves requests. Readiness: the database answers and is migrated, and the log answers. */
const HealthRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const log = yield* SignalLog
    yield* router.add("GET", "/healthz", Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok" })))
    yield* router.add(
      "GET",
      "/readyz",
      Effect.gen(function*() {
        const [database, logUp] = yield* Effect.all([
          schemaIsCurrent.pipe(
            Effect.timeout("2 seconds"),
            Effect.orElseSucceed(() => false),
            Effect.provideService(SqlClient.SqlClient, sql)
          ),
          log.ping
        ], { concurrency: 2 })
        if (database && logUp) {
          return HttpServerResponse.jsonUnsafe({ status: "ready", checks: { database: "ok", log: log.name } })
        }
        const requestId = yield* RequestId
        const failing = [database ? [] : ["the database is unreachable or not migrated"], logUp ? [] : [`the log (${log.name}) is unreachable`]].flat()
        return HttpServerResponse.jsonUnsafe(
          envelopeOf(ServiceUnavailable.of(failing.join("; "), "not_ready"), requestId),
          { status: 503 }
        )
      })
    )
  })
)

/** Every route of both surfaces, with the middleware that makes them one service. */
export const AppRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(ManagementApi, { openapiPath: openApiPaths.management }).pipe(Layer.provide(ManagementHandlers)),
  HttpApiBuilder.layer(EngineApi, { openapiPath: openApiPaths.engine }).pipe(Layer.provide(EngineHandlers)),
  HealthRoutes,
  gateway(makeRouteTable([ManagementApi, EngineApi], healthRoutes))
).pipe(Layer.provide([ManagementAuthLive, EngineAuthLive, EnvelopeLive]))

/** Plain HTTP next to HTTPS answers every request with a permanent redirect to the HTTPS URL. */
const redirectServer = (httpPort: number, httpsPort: number, host: string) =>
  Effect.acquireRelease(
    Effect.callback<Server>((resume) => {
      const server = createHttpServer((req, res) => {
        const hostname = (req.headers.host ?? "localhost").replace(/:\d+$/, "")
        const location = `https://${hostname}${httpsPort === 443 ? "" : `:${httpsPort}`}${req.url ?? "/"}`
        res.writeHead(308, { location, "content-length": "0" }).end()
      })
      server.listen(httpPort, host, () => resume(Effect.succeed(server)))
      server.once("error", (error) => resume(Effect.die(error)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )

/** The listening server: HTTPS plus a redirecting HTTP port when TLS is configured, else HTTP. */
export const HttpServerLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const listen = { port: config.port, host: config.host }
    if (Option.isNone(config.tls)) return NodeHttpServer.layer(createHttpServer, listen)
    const tls = config.tls.value
    const cert = readFileSync(tls.certFile)
    const key = readFileSync(tls.keyFile)
    return Layer.merge(
      NodeHttpServer.layer(() => createHttpsServer({ cert, key }), listen),
      Layer.effectDiscard(redirectServer(config.redirectPort, config.port, config.host))
    )
  })
)

export const serveApp = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return HttpRouter.serve(AppRoutes, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(config.maxBodyBytes))),
      Layer.provide(Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true))
    )
  })
)
