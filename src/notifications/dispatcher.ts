import { Cause, Clock, Duration, Effect, Layer, Schedule } from "effect"
import { render } from "../domain/notification-text.ts"
import { type ClaimedChannel, Notifications } from "../store/notifications-repo.ts"
import { WebhookConfig } from "../webhooks/config.ts"
import { NotificationConfig } from "./config.ts"
import { sendMessage } from "./send.ts"
import { Mailer } from "./mailer.ts"

/** How many channels one round leases, and how many of each one's due messages it sends. */
const roundLimits = { channels: 16, perChannel: 20 } as const

/** An idle dispatcher looks for due messages this often (WEBHOOK_POLL_INTERVAL, as webhooks do). */
const idlePoll = (interval: Duration.Duration) => Schedule.spaced(interval)

/**
 * The notification dispatcher, the webhook dispatcher's twin over the `notifications` outbox:
 * loops that lease channels with due messages, send each channel's messages oldest first and
 * record every attempt before the next. Messages are rendered at send time (a summary's count
 * grows until its window ends); at-least-once like webhooks.
 */
export const NotificationDispatcher = Layer.effectDiscard(
  Effect.gen(function*() {
    const webhookConfig = yield* WebhookConfig
    const config = yield* NotificationConfig
    const notifications = yield* Notifications
    const mailer = yield* Mailer

    const sendAll = (channel: ClaimedChannel) =>
      Effect.gen(function*() {
        for (const message of channel.messages) {
          const attemptedAt = new Date(yield* Clock.currentTimeMillis)
          const rendered = render({
            facts: message.facts,
            firings: message.firings,
            summary: message.summary,
            windowSeconds: channel.coalesce_s,
            userLabel: message.user_label ?? undefined,
            baseUrl: config.publicBaseUrl
          })
          const result = yield* sendMessage(channel.target, rendered).pipe(
            Effect.provideService(WebhookConfig, webhookConfig),
            Effect.provideService(Mailer, mailer)
          )
          const outcome = yield* notifications.recordAttempt(channel, message, attemptedAt, result)
          // A channel that has just turned failing is paused: the rest waits for re-enabling.
          if (outcome === "gave-up") return
        }
      }).pipe(Effect.ensuring(notifications.release(channel.id)))

    const round = Effect.gen(function*() {
      const claimed = yield* notifications.claim(roundLimits)
      yield* Effect.forEach(claimed, sendAll, { concurrency: "unbounded", discard: true })
      return claimed.length
    }).pipe(
      // The loop outlives any one failure (a lost connection, a defect): log it and go on.
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(Effect.logError("notification dispatcher round failed", cause), 0))
    )

    const drain = Effect.repeat(round, { while: (served) => served > 0 })

    for (let i = 0; i < Math.max(1, Math.ceil(webhookConfig.workers / 2)); i++) {
      yield* Effect.forkScoped(Effect.repeat(drain, idlePoll(webhookConfig.pollInterval)))
    }
  })
)
