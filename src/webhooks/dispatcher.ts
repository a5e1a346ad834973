import { Effect, Layer } from "effect"
import { Metrics } from "../observability/metrics.ts"
import { Webhooks } from "../store/webhooks-repo.ts"
import { WebhookConfig } from "./config.ts"
import { deliver } from "./delivery.ts"
import { superviseDispatch } from "../outbox/dispatch-loop.ts"

/** How many webhooks one round leases, and how many of each one's due deliveries it sends. */
const roundLimits = { webhooks: 16, perWebhook: 20 } as const

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
    const deliveries = (yield* Metrics).webhookDeliveries
    yield* superviseDispatch({
      name: "webhook",
      claim: webhooks.claim(roundLimits),
      items: (webhook) => webhook.deliveries,
      send: (webhook, delivery) => deliver(webhook.url, delivery.body, webhook.secret, config),
      record: (webhook, delivery, attemptedAt, result) =>
        Effect.tap(webhooks.recordAttempt(webhook, delivery, attemptedAt, result), (outcome) => Effect.sync(() => deliveries.inc({ outcome }))),
      release: (webhook) => webhooks.release(webhook.id)
    }, config)
  })
)
