import { Config, Context, Duration, Effect, Layer, Option } from "effect"

/**
 * Service configuration, read from the environment once at start-up. Every setting has a
 * default that makes `npm start` work on a bare machine; see README for the list.
 */
export class AppConfig extends Context.Service<AppConfig, {
  readonly host: string
  readonly port: number
  /** PEM files; when both are set the service speaks HTTPS and redirects plain HTTP. */
  readonly tls: Option.Option<{ readonly certFile: string; readonly keyFile: string }>
  readonly redirectPort: number
  readonly apiKeyPrefix: string
  readonly maxBodyBytes: number
  readonly demoBootstrap: boolean
  /** How long a stopping node keeps its idle keep-alive connections for a request already sent. */
  readonly shutdownIdleGrace: Duration.Duration
  /** How long an idle keep-alive connection is kept open for the client's next request. */
  readonly keepAliveTimeout: Duration.Duration
  /** How long a request (headers and body) may take to arrive; a slower one gets 408 and is closed. */
  readonly requestTimeout: Duration.Duration
  /** How long a request's headers may take to arrive. */
  readonly headersTimeout: Duration.Duration
  /** Open connections one client address may hold; more are answered 429 and closed. */
  readonly maxConnectionsPerClient: number
}>()("signal-engine/AppConfig") {
  static readonly layer = Layer.effect(
    AppConfig,
    Effect.gen(function*() {
      const port = yield* Config.Port("PORT").pipe(Config.withDefault(8080))
      const certFile = yield* Config.option(Config.String("TLS_CERT"))
      const keyFile = yield* Config.option(Config.String("TLS_KEY"))
      return AppConfig.of({
        host: yield* Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
        port,
        tls: Option.zipWith(certFile, keyFile, (certFile, keyFile) => ({ certFile, keyFile })),
        redirectPort: yield* Config.Int("HTTP_REDIRECT_PORT").pipe(Config.withDefault(port === 443 ? 80 : port + 1)),
        apiKeyPrefix: yield* Config.String("API_KEY_PREFIX").pipe(Config.withDefault("sek")),
        maxBodyBytes: yield* Config.Int("MAX_BODY_BYTES").pipe(Config.withDefault(1_048_576)),
        demoBootstrap: yield* Config.Boolean("DEMO_BOOTSTRAP").pipe(Config.withDefault(true)),
        shutdownIdleGrace: yield* Config.Duration("SHUTDOWN_IDLE_GRACE").pipe(Config.withDefault(Duration.millis(500))),
        keepAliveTimeout: yield* Config.Duration("HTTP_KEEP_ALIVE_TIMEOUT").pipe(Config.withDefault(Duration.seconds(65))),
        requestTimeout: yield* Config.Duration("HTTP_REQUEST_TIMEOUT").pipe(Config.withDefault(Duration.seconds(30))),
        headersTimeout: yield* Config.Duration("HTTP_HEADERS_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
        maxConnectionsPerClient: yield* Config.Int("MAX_CONNECTIONS_PER_CLIENT").pipe(Config.withDefault(256))
      })
    })
  )
}
