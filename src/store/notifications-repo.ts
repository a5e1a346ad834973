import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { channelFailingMessage } from "../domain/failing-alerts.ts"
import type { ChannelKind, ChannelTarget } from "../domain/channels.ts"
import { type AttemptResult, maxAttempts } from "../domain/delivery.ts"
import type { Environment } from "../domain/environments.ts"
import type { NotificationFacts } from "../domain/notification-text.ts"
import { channelTables, claimDue, type OutboxDispatch, recordOutboxAttempt, releaseLease } from "./outbox-dispatch.ts"
import { DeliveryPolicy } from "./delivery-policy.ts"
import { SecretBox } from "./secret-box.ts"

/** A channel leased by a dispatcher, with its due messages, oldest first. */
export interface ClaimedChannel {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly name: string
  readonly coalesce_s: number
  readonly target: ChannelTarget
  readonly messages: ReadonlyArray<ClaimedMessage>
}

export interface ClaimedMessage {
  readonly id: string
  /** Attempts made before this one. */
  readonly attempts: number
  readonly facts: NotificationFacts
  readonly firings: number
  readonly summary: boolean
  /** "Name <e-mail>" of the user the facts name, when there is one. */
  readonly user_label: string | null
}

/** A channel as the lease answers it, before its URL is opened. */
interface LeasedChannel {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly name: string
  readonly kind: ChannelKind
  readonly url_ciphertext: string | null
  readonly addresses: ReadonlyArray<string>
  readonly coalesce_s: number
}

/**
 * The dispatcher's side of notifications, as webhooks-repo is for webhooks: channels are leased
 * (SKIP LOCKED, one dispatcher per channel across nodes), every attempt is recorded before the
 * next with its next attempt time from the webhooks' delay table, and the fifth failure of a
 * message turns its channel failing, once, with an alert.
 */
export class Notifications extends Context.Service<
  Notifications,
  OutboxDispatch<ClaimedChannel, ClaimedMessage, { readonly channels: number; readonly perChannel: number }>
>()("signal-engine/store/Notifications") {
  static readonly layer = Layer.effect(
    Notifications,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const policy = yield* DeliveryPolicy
      const box = yield* SecretBox

      const claim = Effect.fn("Notifications.claim")(function*(limits: { readonly channels: number; readonly perChannel: number }) {
        return yield* claimDue(
          sql,
          channelTables,
          { targets: limits.channels, perTarget: limits.perChannel, attemptTimeout: policy.attemptTimeout },
          {
            columns: ["id", "org_id", "environment", "name", "kind", "url_ciphertext", "addresses", "coalesce_s"],
            dueItems: (ids) =>
              sql<ClaimedMessage & { readonly target_id: string }>`
                SELECT target_id, id, attempts, facts, firings, summary, user_label FROM (
                  SELECT n.channel_id AS target_id, n.id, n.attempts, n.facts, n.firings, n.summary, n.seq,
                    (SELECT u.name || ' <' || u.email || '>' FROM users u WHERE u.id = n.facts->'data'->>'user_id') AS user_label,
                    row_number() OVER (PARTITION BY n.channel_id ORDER BY n.seq) AS k
                  FROM notifications n
                  WHERE n.channel_id IN ${sql.in(ids)}
                    AND n.status = 'pending' AND n.next_attempt_at <= now()) x
                WHERE k <= ${limits.perChannel}
                ORDER BY target_id, seq`,
            toTarget: (c: LeasedChannel, messages) =>
              Effect.map(
                c.url_ciphertext === null ? Effect.succeed(null) : box.open(c.url_ciphertext),
                (url): ClaimedChannel => ({
                  id: c.id,
                  org_id: c.org_id,
                  environment: c.environment,
                  name: c.name,
                  coalesce_s: c.coalesce_s,
                  target: { kind: c.kind, url, addresses: c.addresses },
                  messages: messages.map(({ target_id: _, ...m }) => m)
                })
              )
          }
        )
      })

      const recordAttempt = Effect.fn("Notifications.recordAttempt")(function*(
        channel: ClaimedChannel,
        message: ClaimedMessage,
        attemptedAt: Date,
        result: AttemptResult
      ) {
        return yield* recordOutboxAttempt(sql, channelTables, policy.retryScale, {
          target: channel,
          item: { where: sql`id = ${message.id}`, attempts: message.attempts },
          attemptedAt,
          result,
          failing: () => ({
            type: "channel.failing",
            message: channelFailingMessage({ id: channel.id, name: channel.name, kind: channel.target.kind }, maxAttempts, message.id, result.error),
            data: { channel_id: channel.id, kind: channel.target.kind, notification_id: message.id, last_error: result.error },
            except: channel.id
          })
        })
      })

      const release = Effect.fn("Notifications.release")(function*(channelId: string) {
        yield* releaseLease(sql, channelTables, channelId)
      })

      return Notifications.of({ claim, recordAttempt, release })
    })
  )
}
