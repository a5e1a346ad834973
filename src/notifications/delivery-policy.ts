import { Effect, Layer, Option } from "effect"
import { DeliveryPolicy } from "../store/delivery-policy.ts"
import { WebhookConfig } from "../webhooks/config.ts"
import { vetUrl } from "../webhooks/url-policy.ts"
import { NotificationConfig } from "./config.ts"

/**
 * The delivery policy the store's repositories apply (src/store/delivery-policy.ts), from the
 * webhooks' settings and URL policy (which notification channels share) and the SMTP setting.
 */
export const DeliveryPolicyLive = Layer.effect(
  DeliveryPolicy,
  Effect.gen(function*() {
    const webhooks = yield* WebhookConfig
    const notifications = yield* NotificationConfig
    return DeliveryPolicy.of({
      attemptTimeout: webhooks.timeout,
      retryScale: webhooks.retryScale,
      urlRefusal: (url) => Effect.map(vetUrl(url, webhooks.allowedHosts), (verdict) => verdict._tag === "Refused" ? verdict.reason : undefined),
      emailConfigured: Option.isSome(notifications.smtpUrl)
    })
  })
)
