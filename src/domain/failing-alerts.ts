/**
 * The sentences of the admin alerts sent when a webhook or a notification channel is given up on
 * (`webhook.failing`, `channel.failing`): what failed, the last error, and how to resume it
 * through the management API. The store records them; it does not word them.
 */

export const webhookFailingMessage = (
  webhook: { readonly id: string; readonly url: string },
  attempts: number,
  eventId: string,
  lastError: string | null | undefined
) =>
  `webhook ${webhook.id} (${webhook.url}) is failing: ${attempts} attempts to deliver ${eventId} failed ` +
  `(last: ${lastError ?? "unknown"}); deliveries are paused until it is re-enabled with POST /api/v1/webhooks/${webhook.id}/enable`

export const channelFailingMessage = (
  channel: { readonly id: string; readonly name: string; readonly kind: string },
  attempts: number,
  messageId: string,
  lastError: string | null | undefined
) =>
  `notification channel ${channel.id} (“${channel.name}”, ${channel.kind}) is failing: ${attempts} attempts to send ` +
  `message ${messageId} failed (last: ${lastError ?? "unknown"}); messages are paused until it is re-enabled with ` +
  `PATCH /api/v1/channels/${channel.id} {"enabled": true}`
