import { Config, Context, Duration, Effect, Layer } from "effect"

/**
 * Webhook settings, read once at start-up:
 * - WEBHOOK_ALLOWED_HOSTS: comma list of host names or addresses that may be plain http and may
 *   resolve to private/loopback addresses (e.g. "127.0.0.1,localhost" for local receivers).
 * - WEBHOOK_TIMEOUT: how long a receiver has to answer (default 10 s, spec §6.4).
 * - WEBHOOK_RETRY_SCALE: multiplies the retry delays (default 1; tests use e.g. 0.001).
 * - WEBHOOK_POLL_INTERVAL: how often an idle dispatcher looks for due deliveries (default 500 ms).
 * - WEBHOOK_WORKERS: concurrent dispatcher loops per node (default 4).
 * (WEBHOOK_SECRET_KEY, the key of secrets at rest, is the store's: src/store/secret-box.ts.)
 */
export class WebhookConfig extends Context.Service<WebhookConfig, {
  readonly allowedHosts: ReadonlySet<string>
  readonly timeout: Duration.Duration
  readonly retryScale: number
  readonly pollInterval: Duration.Duration
  readonly workers: number
}>()("signal-engine/webhooks/WebhookConfig") {
  static readonly layer = Layer.effect(
    WebhookConfig,
    Effect.gen(function*() {
      const hosts = yield* Config.String("WEBHOOK_ALLOWED_HOSTS").pipe(Config.withDefault(""))
      return WebhookConfig.of({
        allowedHosts: new Set(hosts.split(",").map((h) => normalizeHost(h.trim())).filter((h) => h.length > 0)),
        timeout: yield* Config.Duration("WEBHOOK_TIMEOUT").pipe(Config.withDefault(Duration.seconds(10))),
        retryScale: yield* Config.Number("WEBHOOK_RETRY_SCALE").pipe(Config.withDefault(1)),
        pollInterval: yield* Config.Duration("WEBHOOK_POLL_INTERVAL").pipe(Config.withDefault(Duration.millis(500))),
        workers: yield* Config.Int("WEBHOOK_WORKERS").pipe(Config.withDefault(4))
      })
    })
  )
}

/** Host names compare lower-cased, IPv6 literals without brackets. */
export const normalizeHost = (host: string): string => host.toLowerCase().replace(/^\[(.*)\]$/, "$1")
