import { Context, type Duration, type Effect } from "effect"

/**
 * What the delivery repositories (webhooks, channels, notifications) take from the delivery side,
 * which provides it (src/notifications/delivery-policy.ts): the store imports no delivery code,
 * and the delivery code imports the store.
 */
export class DeliveryPolicy extends Context.Service<DeliveryPolicy, {
  /** How long one attempt may take: a lease covers every attempt of a claim. */
  readonly attemptTimeout: Duration.Duration
  /** Multiplies the retry delays (tests shorten them). */
  readonly retryScale: number
  /** Why a URL may not be a delivery target (the SSRF policy, with DNS), or undefined when it may. */
  readonly urlRefusal: (url: string) => Effect.Effect<string | undefined>
  /** Whether e-mail can be sent: the operator configured SMTP. */
  readonly emailConfigured: boolean
}>()("signal-engine/store/DeliveryPolicy") {}
