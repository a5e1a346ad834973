import { Effect } from "effect"
import type { ChannelTarget } from "../domain/channels.ts"
import type { Rendered } from "../domain/notification-text.ts"
import type { AttemptResult } from "../domain/delivery.ts"
import { deliverVetted, postJson } from "../webhooks/delivery.ts"
import { WebhookConfig } from "../webhooks/config.ts"
import { chatBody, emailMessage } from "./formats.ts"
import { Mailer } from "./mailer.ts"

/**
 * One attempt to send a rendered message to a channel. Chat URLs pass the webhooks' SSRF policy
 * again at every attempt (and the POST connects to the address that passed); a failure of any
 * kind is a failed attempt, never an error.
 */
export const sendMessage = (target: ChannelTarget, message: Rendered): Effect.Effect<AttemptResult, never, WebhookConfig | Mailer> =>
  Effect.gen(function*() {
    if (target.kind === "email") {
      const mailer = yield* Mailer
      return yield* mailer.send(target.addresses, emailMessage(message))
    }
    const config = yield* WebhookConfig
    if (target.url === null) return { delivered: false, status_code: null, latency_ms: 0, error: "the channel has no url" }
    const body = JSON.stringify(chatBody(target.kind, message))
    return yield* deliverVetted(target.url, config, (vetted) => postJson(vetted, body, {}, config.timeout))
  })
