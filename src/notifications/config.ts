import { Config, Context, Effect, Layer, Option, type Redacted } from "effect"

/**
 * Notification settings, read once at start-up (delivery timeouts, retry scale, polling and the
 * URL policy are the webhooks' own, WEBHOOK_*):
 * - SMTP_URL: the operator's SMTP server for e-mail channels, e.g. smtp://user:pass@mail:587 or
 *   smtps://mail:465 (secret: it may hold credentials). Without it, e-mail channels are refused.
 * - SMTP_FROM: the sender of notification e-mails (default "signal-engine <signal-engine@localhost>").
 * - PUBLIC_BASE_URL: where people reach this service (e.g. https://signals.example.com); messages
 *   then link to the dashboard page of what they are about.
 */
export class NotificationConfig extends Context.Service<NotificationConfig, {
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  readonly smtpFrom: string
  readonly publicBaseUrl: string | undefined
}>()("signal-engine/notifications/NotificationConfig") {
  static readonly layer = Layer.effect(
    NotificationConfig,
    Effect.gen(function*() {
      const base = yield* Config.option(Config.String("PUBLIC_BASE_URL"))
      return NotificationConfig.of({
        smtpUrl: yield* Config.option(Config.Redacted("SMTP_URL")),
        smtpFrom: yield* Config.String("SMTP_FROM").pipe(Config.withDefault("signal-engine <signal-engine@localhost>")),
        publicBaseUrl: Option.getOrUndefined(Option.map(base, (b) => b.replace(/\/+$/, "")))
      })
    })
  )
}
