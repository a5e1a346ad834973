import { Cause, Clock, Duration, Effect, Layer, Schedule } from "effect"
import { type ClaimedWebhook, Webhooks } from "../store/webhooks-repo.ts"
import { WebhookConfig } from "./config.ts"
import { deliver } from "./delivery.ts"

/** How many webhooks one round leases, and how many of each one's due deliveries it sends. */
const roundLimits = { webhooks: 16, perWebhook: 20 } as const

/** An idle dispatcher looks for due deliveries this often (WEBHOOK_POLL_INTERVAL). */
const idlePoll = (interval: Duration.Duration) => Schedule.spaced(interval)

/**
 * The outbox dispatcher: `WEBHOOK_WORKERS` loops per node, each leasing webhooks with due
 * deliveries (SKIP LOCKED, so nodes share the work and never send one attempt twice at the same
 * time), sending a webhook's deliveries one after another, oldest event first, and recording
 * every attempt before the next. Delivery is at-least-once: a node that dies between a 2xx and
 * its record sends that event again after the lease expires (receivers deduplicate on `id`).
 */
export const WebhookDispatcher = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const webhooks = yield* Webhooks

    const sendAll = (webhook: ClaimedWebhook) =>
      Effect.gen(function*() {
        for (const delivery of webhook.deliveries) {
          const attemptedAt = new Date(yield* Clock.currentTimeMillis)
          const result = yield* deliver(webhook.url, delivery.body, webhook.secret, config)
          const outcome = yield* webhooks.recordAttempt(webhook, delivery, attemptedAt, result)
          // A webhook that has just turned failing is paused: the rest waits for re-enabling.
          if (outcome === "gave-up") return
        }
      }).pipe(Effect.ensuring(webhooks.release(webhook.id)))

    /** One round: lease, send, record. Answers how many webhooks it served. */
    const round = Effect.gen(function*() {
      const claimed = yield* webhooks.claim(roundLimits)
      yield* Effect.forEach(claimed, sendAll, { concurrency: "unbounded", discard: true })
      return claimed.length
    }).pipe(
      // The loop outlives any one failure (a lost connection, a defect): log it and go on.
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(Effect.logError("webhook dispatcher round failed", cause), 0))
    )

    /** Rounds back to back while there is work, then one idle wait. */
    const drain = Effect.repeat(round, { while: (served) => served > 0 })

    for (let i = 0; i < Math.max(1, config.workers); i++) {
      yield* Effect.forkScoped(Effect.repeat(drain, idlePoll(config.pollInterval)))
    }
  })
)
