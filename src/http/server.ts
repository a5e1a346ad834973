import { NodeHttpServer } from "@effect/platform-node"
import { ByteSize, Duration, Effect, Layer, Option } from "effect"
import { HttpIncomingMessage, HttpMiddleware, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import type { Duplex } from "node:stream"
import { createServer as createHttpServer, type Server, STATUS_CODES } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import { capConnectionsPerClient, serverTimeouts } from "./connection-limits.ts"
import { portsOf, PortUnavailable, portUnavailable } from "./listen-ports.ts"
import { AppConfig } from "../config.ts"
import { envelopeOf, ServiceUnavailable, Unauthorized } from "../domain/errors.ts"
import { makeRequestId } from "../domain/ids.ts"
import { Cluster } from "../engine/cluster.ts"
import { clusterSecretHeader } from "../engine/owner-verdict.ts"
import { Processor } from "../engine/processor.ts"
import { VerdictRegistry } from "../engine/verdicts.ts"
import { SignalLog } from "../log/signal-log.ts"
import { schemaIsCurrent } from "../store/database.ts"
import { EngineAuthLive, ManagementAuthLive } from "./auth.ts"
import { EngineApi } from "./engine/api.ts"
import { EngineHandlers } from "./engine/handlers.ts"
import { SignalLimits } from "./engine/signal-limits.ts"
import { claudeCodeHookRoute, makeClaudeCodeHookRoute } from "./engine/claude-code-hook-route.ts"
import { ingestRoute, makeIngestRoute } from "./engine/ingest-route.ts"
import { makeOtlpRoutes, otlpRoutes } from "./engine/otlp-route.ts"
import { DashboardRoutes, dashboardRoutes, loadDashboardAssets } from "./dashboard.ts"
import { EnvelopeLive } from "./envelope.ts"
import { AuditTrailLive } from "./audit-trail.ts"
import { Draining } from "./draining.ts"
import { gateway } from "./gateway.ts"
import { ManagementApi } from "./management/api.ts"
import { ManagementHandlers } from "./management/handlers.ts"
import { RequestId } from "../observability/request-id.ts"
import { makeRouteTable } from "./route-table.ts"
import { makeSessionRoutes, ssoLogoutRoute, ssoMeRoute, ssoOrgRoute } from "./sso/session-routes.ts"
import { makeSignInRoutes, ssoCallbackRoute, ssoLoginRoute } from "./sso/sign-in-routes.ts"
import { requestsUntraced } from "../observability/tracing.ts"
import { stampReceived } from "../observability/request-received.ts"

export const openApiPaths = {
  management: "/api/v1/openapi.json",
  engine: "/engine/v1/openapi.json"
} as const

const internalRoutes = [{ method: "GET", path: "/internal/v1/verdicts/:signal_id" }]

/** The dashboard's sign-in with the org's identity provider (src/http/sso/). */
const ssoRoutes = [ssoLoginRoute, ssoCallbackRoute, ssoMeRoute, ssoLogoutRoute, ssoOrgRoute]

const healthRoutes = [
  { method: "GET", path: "/healthz" },
  { method: "GET", path: "/readyz" },
  { method: "GET", path: openApiPaths.management },
  { method: "GET", path: openApiPaths.engine }
]

/**
 * Liveness: the process serves requests. Readiness: the database answers and is migrated, the
 * log answers, and the node owns a partition unless the log gives it none (else 503). A ready node also lists its partitions, and those whose batch keeps
 * failing to commit: their signals are in the log and are answered `pending` until the batch
 * commits, which the worker retries without end. Such a node is `degraded` but still 200: its
 * other partitions serve, and taking it out of rotation would not help the failing one. It also
 * says how many users' actors its partitions hold in memory and how many session timers run: what
 * its memory follows (idle actors are evicted after ACTOR_IDLE_TIMEOUT).
 */
const HealthRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const log = yield* SignalLog
    const processor = yield* Processor
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
        const partitions = yield* processor.partitions
        // A node that owns no partition while the log has a share for it (or has given it none
        // yet: a restarted Kafka node before it is back in the consumer group) answers nothing
        // itself: not ready, so traffic goes to the nodes that own partitions.
        const share = yield* log.assignment
        const owning = partitions.length > 0 || (Option.isSome(share) && share.value.size === 0)
        if (database && logUp && owning) {
          const failing = partitions.flatMap((p) =>
            p.failing ? [{ partition: p.partition, since: new Date(p.failing.since).toISOString(), attempts: p.failing.attempts, error: p.failing.error }] : []
          )
          return HttpServerResponse.jsonUnsafe({
            status: failing.length === 0 ? "ready" : "degraded",
            checks: {
              database: "ok",
              log: log.name,
              partitions: { owned: partitions.map((p) => p.partition), failing },
              actors: {
                in_memory: partitions.reduce((n, p) => n + p.actors, 0),
                session_timers: partitions.reduce((n, p) => n + p.timers, 0)
              }
            }
          })
        }
        const requestId = yield* RequestId
        const failing = [
          database ? [] : ["the database is unreachable or not migrated"],
          logUp ? [] : [`the log (${log.name}) is unreachable`],
          owning ? [] : [
            Option.isNone(share)
              ? `this node owns no partition yet: it has no share of the log (${log.name}) yet (starting or rejoining)`
              : `this node owns no partition yet: partitions ${[...share.value].join(", ")} are being loaded`
          ]
        ].flat()
        return HttpServerResponse.jsonUnsafe(
          envelopeOf(ServiceUnavailable.of(failing.join("; "), "not_ready"), requestId),
          { status: 503 }
        )
      })
    )
  })
)

/**
 * The proxy path's internal route: another node of the cluster asks for the verdict of a signal
 * in a partition this node owns (header x-cluster-secret; 200 with the verdict, 204 when it did
 * not come within `wait_ms`). Not part of either API; without CLUSTER_SECRET it refuses everyone.
 */
const InternalRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const cluster = yield* Cluster
    const verdicts = yield* VerdictRegistry
    yield* router.add(
      "GET",
      "/internal/v1/verdicts/:signal_id",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const requestId = yield* RequestId
        if (!cluster.authentic(request.headers[clusterSecretHeader])) {
          return HttpServerResponse.jsonUnsafe(
            envelopeOf(Unauthorized.of("a valid cluster secret is required", "invalid_cluster_secret"), requestId),
            { status: 401 }
          )
        }
        const params = yield* HttpRouter.params
        const query = new URL(request.url, "http://internal").searchParams
        const waitMs = Math.min(Math.max(Number(query.get("wait_ms") ?? 0) || 0, 0), 10_000)
        const verdict = yield* verdicts.await(params.signal_id ?? "", Duration.millis(waitMs))
        return Option.isSome(verdict) ? HttpServerResponse.jsonUnsafe(verdict.value) : HttpServerResponse.empty({ status: 204 })
      })
    )
  })
)

/** The dashboard's files, read once at start-up (src/http/dashboard.ts). */
const dashboardAssets = loadDashboardAssets()

/** Every route of both surfaces and the dashboard, with the middleware that makes them one service. */
export const AppRoutes = Layer.mergeAll(
  HttpApiBuilder.layer(ManagementApi, { openapiPath: openApiPaths.management }).pipe(Layer.provide(ManagementHandlers)),
  HttpApiBuilder.layer(EngineApi, { openapiPath: openApiPaths.engine }).pipe(Layer.provide(EngineHandlers)),
  HealthRoutes,
  InternalRoutes,
  DashboardRoutes(dashboardAssets),
  gateway(
    makeRouteTable([ManagementApi, EngineApi], [...healthRoutes, ...internalRoutes, ...dashboardRoutes(dashboardAssets), ...otlpRoutes, ...ssoRoutes]),
    Effect.map(
      Effect.all([makeIngestRoute, makeClaudeCodeHookRoute, makeOtlpRoutes, makeSignInRoutes, makeSessionRoutes]),
      ([ingest, claudeCodeHook, otlp, signIn, session]) => [
        { ...ingestRoute, handler: ingest },
        { ...claudeCodeHookRoute, handler: claudeCodeHook },
        ...otlp,
        ...signIn,
        ...session
      ]
    ),
    Effect.map(Processor, (processor) => processor.settled)
  )
).pipe(Layer.provide([ManagementAuthLive, EngineAuthLive, EnvelopeLive, AuditTrailLive, SignalLimits.layer]))

/** Plain HTTP next to HTTPS answers every request with a permanent redirect to the HTTPS URL. */
const redirectServer = (httpPort: number, httpsPort: number, host: string) =>
  Effect.acquireRelease(
    Effect.callback<Server, unknown>((resume) => {
      const server = createHttpServer((req, res) => {
        const hostname = (req.headers.host ?? "localhost").replace(/:\d+$/, "")
        const location = `https://${hostname}${httpsPort === 443 ? "" : `:${httpsPort}`}${req.url ?? "/"}`
        res.writeHead(308, { location, "content-length": "0" }).end()
      })
      server.listen(httpPort, host, () => resume(Effect.succeed(server)))
      server.once("error", (error) => resume(Effect.fail(error)))
    }),
    (server) =>
      Effect.callback<void>((resume) => {
        server.close(() => resume(Effect.void))
      })
  )

/**
 * Requests Node cannot parse (an unknown method, headers over its limit, a malformed request
 * line) never reach the app, and Node would answer them with a bare status and no body. They get
 * the envelope too; the connection is closed after it, since the stream is not HTTP any more.
 */
const answerClientErrors = <S extends Server>(server: S): S => {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === "ECONNRESET" || !socket.writable) {
      socket.destroy()
      return
    }
    const [status, code, message] = error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "headers_too_large", "the request headers are too large"] as const
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? [408, "request_timeout", "the request did not arrive in time"] as const
      : [400, "invalid_request", "the request is not valid HTTP"] as const
    const requestId = makeRequestId()
    const body = JSON.stringify({ error: message, code, status, request_id: requestId })
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
    )
  })
  return server
}

/**
 * Node's `server.close()` stops listening and at once destroys every keep-alive connection that
 * is idle, so a request already sent over one but not yet read meets a reset: the client cannot
 * tell whether it was taken. Here those connections are left `graceMs` first: a request that
 * arrives meanwhile is served (the node is draining, so its answer closes the connection), and
 * what is still idle then is closed, and again every 100 ms until the server has closed (a
 * response begun before draining leaves its connection open and idle).
 */
const closeIdleAfterGrace = <S extends Server>(server: S, graceMs: number): S => {
  if (graceMs <= 0) return server
  const closeIdle = server.closeIdleConnections.bind(server)
  let timer: NodeJS.Timeout | undefined
  // `close()` calls this first thing; nothing else here does.
  server.closeIdleConnections = () => {
    if (timer !== undefined) return
    const sweep = () => {
      closeIdle()
      timer = setTimeout(sweep, 100)
    }
    timer = setTimeout(sweep, graceMs)
  }
  server.on("close", () => clearTimeout(timer))
  return server
}

/**
 * Idle keep-alive connections are kept `keepAliveMs` (HTTP_KEEP_ALIVE_TIMEOUT, 65 s) instead of
 * Node's 5 s. A client that reuses a connection the server is closing at that instant has its
 * request reset, and cannot tell whether the signal was taken; clients that ignore the
 * `Keep-Alive: timeout` hint (Python's requests, Go, Rust's hyper) and proxies keep idle
 * connections for 60-90 s, so the server must be the one that waits longer. (Node's headers
 * timeout counts from a request's first byte, not over an idle connection: it needs no change.)
 */
const keepAlive = <S extends Server>(server: S, keepAliveMs: number): S => {
  server.keepAliveTimeout = keepAliveMs
  return server
}

/** The listening server: HTTPS plus a redirecting HTTP port when TLS is configured, else HTTP. */
export const HttpServerLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const listen = { port: config.port, host: config.host }
    const timeouts = serverTimeouts({
      requestTimeoutMs: Duration.toMillis(config.requestTimeout),
      headersTimeoutMs: Duration.toMillis(config.headersTimeout)
    })
    const prepare = <S extends Server>(server: S, tls: boolean) =>
      closeIdleAfterGrace(
        keepAlive(
          answerClientErrors(capConnectionsPerClient(server.on("request", stampReceived), config.maxConnectionsPerClient, tls)),
          Duration.toMillis(config.keepAliveTimeout)
        ),
        Duration.toMillis(config.shutdownIdleGrace)
      )
    // A port taken since start-up's check (listen-ports.ts) is reported the same way.
    const [main, redirect] = portsOf(config)
    const serving = (server: () => Server) => {
      const layer = NodeHttpServer.layer(server, listen)
      return layer.pipe(
        Layer.catchTag(
          "ServeError",
          (error) => Layer.effectContext<Layer.Success<typeof layer>, PortUnavailable, never>(Effect.fail(portUnavailable(main!, config.host, error.cause)))
        )
      )
    }
    if (Option.isNone(config.tls)) return serving(() => prepare(createHttpServer(timeouts), false))
    const tls = config.tls.value
    const cert = readFileSync(tls.certFile)
    const key = readFileSync(tls.keyFile)
    return Layer.merge(
      serving(() => prepare(createHttpsServer({ cert, key, ...timeouts }), true)),
      Layer.effectDiscard(
        redirectServer(config.redirectPort, config.port, config.host).pipe(
          Effect.mapError((error) => portUnavailable(redirect!, config.host, error))
        )
      )
    )
  })
)

/**
 * Serving. On the way down, draining starts before the server closes (this finalizer is added
 * after the server's, so it runs first): responses from then on close their connections.
 */
export const serveApp = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const untraced = yield* requestsUntraced
    const serve = HttpRouter.serve(AppRoutes, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(config.maxBodyBytes))),
      // Traced only when OTLP is configured (TracingLive); never the probes.
      Layer.provide(Layer.succeed(HttpMiddleware.TracerDisabledWhen, untraced))
    )
    const drainFirst = Layer.effectDiscard(
      Effect.flatMap(
        Draining,
        (draining) => Effect.addFinalizer(() => Effect.andThen(Effect.logInfo("signal-engine stopping: draining requests"), draining.start))
      )
    )
    return drainFirst.pipe(Layer.provide(serve), Layer.provideMerge(Draining.layer))
  })
)
