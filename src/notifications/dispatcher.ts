import { Effect, Layer } from "effect"
import { render } from "../domain/notification-text.ts"
import { Notifications } from "../store/notifications-repo.ts"
import { WebhookConfig } from "../webhooks/config.ts"
import { superviseDispatch } from "../outbox/dispatch-loop.ts"
import { NotificationConfig } from "./config.ts"
import { sendMessage } from "./send.ts"
import { Mailer } from "./mailer.ts"

/** How many channels one round leases, and how many of each one's due messages it sends. */
const roundLimits = { channels: 16, perChannel: 20 } as const

/**
 * The notification dispatcher, the webhook dispatcher's twin over the `notifications` outbox
 * (half as many loops, polling as webhooks do): loops that lease channels with due messages,
 * send each channel's messages oldest first and record every attempt before the next. Messages
 * are rendered at send time (a summary's count grows until its window ends); at-least-once like
 * webhooks.
 */
export const NotificationDispatcher = Layer.effectDiscard(
  Effect.gen(function*() {
    const webhookConfig = yield* WebhookConfig
    const config = yield* NotificationConfig
    const notifications = yield* Notifications
    const mailer = yield* Mailer
    yield* superviseDispatch({
      name: "notification",
      claim: notifications.claim(roundLimits),
      items: (channel) => channel.messages,
      send: (channel, message) =>
        sendMessage(
          channel.target,
          render({
            facts: message.facts,
            firings: message.firings,
            summary: message.summary,
            windowSeconds: channel.coalesce_s,
            userLabel: message.user_label ?? undefined,
            baseUrl: config.publicBaseUrl
          })
        ).pipe(
          Effect.provideService(WebhookConfig, webhookConfig),
          Effect.provideService(Mailer, mailer)
        ),
      record: notifications.recordAttempt,
      release: (channel) => notifications.release(channel.id)
    }, { workers: Math.ceil(webhookConfig.workers / 2), pollInterval: webhookConfig.pollInterval })
  })
)
