import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { createTransport } from "nodemailer"
import type { AttemptResult } from "../domain/delivery.ts"
import { WebhookConfig } from "../webhooks/config.ts"
import { NotificationConfig } from "./config.ts"

/**
 * E-mail through the operator's SMTP server (SMTP_URL), with nodemailer's SMTP client (one
 * transport per node, closed when the node stops). A send that the server does not accept within
 * the webhooks' timeout is a failed attempt, as for chat, and is retried on their schedule.
 */
export class Mailer extends Context.Service<Mailer, {
  readonly configured: boolean
  readonly send: (to: ReadonlyArray<string>, message: { readonly subject: string; readonly text: string }) => Effect.Effect<AttemptResult>
}>()("signal-engine/notifications/Mailer") {
  static readonly layer = Layer.effect(
    Mailer,
    Effect.gen(function*() {
      const config = yield* NotificationConfig
      const { timeout } = yield* WebhookConfig
      const smtpUrl = Option.getOrUndefined(config.smtpUrl)
      if (smtpUrl === undefined) {
        return Mailer.of({
          configured: false,
          send: () => Effect.succeed({ delivered: false, status_code: null, latency_ms: 0, error: "e-mail is not configured (SMTP_URL)" })
        })
      }
      const ms = Duration.toMillis(timeout)
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => createTransport(Redacted.value(smtpUrl), { from: config.smtpFrom }).setMaxListeners(0)),
        (t) => Effect.sync(() => t.close())
      )
      // Timeouts are set per transport option, from the URL's own where it names them.
      Object.assign(transport.options, { connectionTimeout: ms, greetingTimeout: ms, socketTimeout: ms })
      const send = (to: ReadonlyArray<string>, message: { readonly subject: string; readonly text: string }) =>
        Effect.gen(function*() {
          const started = performance.now()
          const elapsed = () => Math.round((performance.now() - started) * 10) / 10
          return yield* Effect.tryPromise(() => transport.sendMail({ to: [...to], subject: message.subject, text: message.text })).pipe(
            Effect.timeout(timeout),
            Effect.match({
              onSuccess: (): AttemptResult => ({ delivered: true, status_code: null, latency_ms: elapsed(), error: null }),
              onFailure: (e): AttemptResult => ({
                delivered: false,
                status_code: null,
                latency_ms: elapsed(),
                error: `smtp: ${
                  e._tag === "TimeoutError" ? `no answer within ${Duration.format(timeout)}` : String(e.cause instanceof Error ? e.cause.message : e.cause)
                }`
              })
            })
          )
        })
      return Mailer.of({ configured: true, send })
    })
  )
}
