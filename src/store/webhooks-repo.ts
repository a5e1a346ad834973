import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { webhookFailingMessage } from "../domain/failing-alerts.ts"
import type { Environment } from "../domain/environments.ts"
import { type AttemptResult, judgeAttempt, maxAttempts } from "../domain/delivery.ts"
import { makeId } from "../domain/ids.ts"
import { isWebhookEventType, type WebhookEventType, webhookEventTypes } from "../domain/notices.ts"
import type { Page } from "../domain/pagination.ts"
import {
  type Alert,
  minSecretLength,
  NoWebhookEvents,
  SecretTooShort,
  UnknownWebhookEvent,
  UrlRefused,
  type Webhook,
  WebhookNotFound
} from "../domain/webhooks.ts"
import { leaseDue, nextAttemptAt, type OutboxDispatch, recordOnItem, releaseLease, turnFailing, webhookTables } from "./outbox-dispatch.ts"
import { DeliveryPolicy } from "./delivery-policy.ts"
import { SecretBox } from "./secret-box.ts"
import { type PageRequest, type Tenant, tenantPage } from "./tenant-pages.ts"

export type { AttemptOutcome } from "../domain/delivery.ts"

export type { PageRequest, Tenant } from "./tenant-pages.ts"

const webhookPrefix = "wh"

interface WebhookRow {
  readonly id: string
  readonly url: string
  readonly events: ReadonlyArray<WebhookEventType>
  readonly enabled: boolean
  readonly failing: boolean
  readonly created_at: Date
}
const toWebhook = (r: WebhookRow): Webhook => ({
  id: r.id,
  url: r.url,
  events: [...r.events],
  enabled: r.enabled,
  failing: r.failing,
  created_at: new Date(r.created_at).toISOString()
})
const webhookColumns = "id, url, events, enabled, failing, created_at"

/** A webhook leased by a dispatcher, with its due deliveries, oldest event first. */
export interface ClaimedWebhook {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly url: string
  readonly secret: string
  readonly deliveries: ReadonlyArray<ClaimedDelivery>
}

export interface ClaimedDelivery {
  readonly event_id: string
  /** Attempts made before this one. */
  readonly attempts: number
  /** The exact body to send (the stored envelope). */
  readonly body: string
}

/**
 * Webhooks, their outbox deliveries and the alerts they raise. Registration validates names,
 * secret and URL policy (DeliveryPolicy); the dispatcher side leases webhooks (outbox-dispatch.ts:
 * one dispatcher at a time per webhook, so its deliveries go out in order and no attempt runs
 * twice concurrently) and records each attempt with its result and the next attempt time.
 */
export class Webhooks extends Context.Service<Webhooks, {
  readonly create: (
    tenant: Tenant,
    input: { readonly url: string; readonly events: ReadonlyArray<string>; readonly secret: string }
  ) => Effect.Effect<Webhook, UnknownWebhookEvent | NoWebhookEvents | SecretTooShort | UrlRefused>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Webhook>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, WebhookNotFound>
  /** Clears the failing state; what queued meanwhile is due at once, oldest first. */
  readonly enable: (tenant: Tenant, id: string) => Effect.Effect<Webhook, WebhookNotFound>
  /** The URL and the decrypted secret, for the test endpoint. */
  readonly target: (tenant: Tenant, id: string) => Effect.Effect<{ readonly url: string; readonly secret: string }, WebhookNotFound>
  readonly listAlerts: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Alert>>
} & OutboxDispatch<ClaimedWebhook, ClaimedDelivery, { readonly webhooks: number; readonly perWebhook: number }>>()(
  "signal-engine/store/Webhooks"
) {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const policy = yield* DeliveryPolicy
      const box = yield* SecretBox

      const create = Effect.fn("Webhooks.create")(function*(
        tenant: Tenant,
        input: { readonly url: string; readonly events: ReadonlyArray<string>; readonly secret: string }
      ) {
        const unknown = input.events.filter((e) => !isWebhookEventType(e))
        if (unknown.length > 0) return yield* new UnknownWebhookEvent(unknown)
        if (input.events.length === 0) return yield* new NoWebhookEvents()
        if ([...input.secret].length < minSecretLength) return yield* new SecretTooShort()
        const refusal = yield* policy.urlRefusal(input.url)
        if (refusal !== undefined) return yield* new UrlRefused(refusal)
        const events = webhookEventTypes.filter((t) => input.events.includes(t))
        const rows = yield* sql<WebhookRow>`
          INSERT INTO webhooks (id, org_id, environment, url, events, secret_ciphertext)
          VALUES (${makeId(webhookPrefix)}, ${tenant.orgId}, ${tenant.environment}, ${input.url},
            string_to_array(${events.join(",")}, ','), ${box.seal(input.secret)})
          RETURNING ${sql.literal(webhookColumns)}`.pipe(Effect.orDie)
        return toWebhook(rows[0]!)
      })

      const list = Effect.fn("Webhooks.list")(function*(tenant: Tenant, page: PageRequest) {
        return yield* tenantPage(sql, { table: "webhooks", columns: webhookColumns }, tenant, page, toWebhook)
      })

      const notFound = (id: string) => new WebhookNotFound(id)

      const remove = Effect.fn("Webhooks.remove")(function*(tenant: Tenant, id: string) {
        // Its deliveries and attempts go with it (cascade): a deleted webhook gets nothing more.
        const rows = yield* sql`DELETE FROM webhooks WHERE id = ${id} AND org_id = ${tenant.orgId}
          AND environment = ${tenant.environment} RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound(id)
      })

      const enable = Effect.fn("Webhooks.enable")(function*(tenant: Tenant, id: string) {
        const rows = yield* sql.withTransaction(Effect.gen(function*() {
          const updated = yield* sql<WebhookRow>`
            UPDATE webhooks SET failing = false, failing_since = NULL, enabled = true
            WHERE id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            RETURNING ${sql.literal(webhookColumns)}`
          if (updated.length > 0) {
            yield* sql`UPDATE webhook_deliveries SET next_attempt_at = now()
              WHERE webhook_id = ${id} AND status = 'pending' AND next_attempt_at > now()`
          }
          return updated
        })).pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound(id)
        return toWebhook(rows[0]!)
      })

      const target = Effect.fn("Webhooks.target")(function*(tenant: Tenant, id: string) {
        const rows = yield* sql<{ readonly url: string; readonly secret_ciphertext: string }>`
          SELECT url, secret_ciphertext FROM webhooks
          WHERE id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}`.pipe(Effect.orDie)
        const row = rows[0]
        if (row === undefined) return yield* notFound(id)
        return { url: row.url, secret: yield* box.open(row.secret_ciphertext) }
      })

      const listAlerts = Effect.fn("Webhooks.listAlerts")(function*(tenant: Tenant, page: PageRequest) {
        return yield* tenantPage(
          sql,
          { table: "alerts", columns: "id, type, message, data, created_at" },
          tenant,
          page,
          (r: {
            readonly id: string
            readonly type: string
            readonly message: string
            readonly data: Readonly<Record<string, unknown>>
            readonly created_at: Date
          }): Alert => ({ ...r, data: { ...r.data }, created_at: new Date(r.created_at).toISOString() })
        )
      })

      const claim = Effect.fn("Webhooks.claim")(function*(limits: { readonly webhooks: number; readonly perWebhook: number }) {
        const leased = yield* leaseDue<{
          readonly id: string
          readonly org_id: string
          readonly environment: Environment
          readonly url: string
          readonly secret_ciphertext: string
        }>(
          sql,
          webhookTables,
          { targets: limits.webhooks, perTarget: limits.perWebhook, attemptTimeout: policy.attemptTimeout },
          ["id", "org_id", "environment", "url", "secret_ciphertext"]
        )
        if (leased.length === 0) return []
        const deliveries = yield* sql<{
          readonly webhook_id: string
          readonly event_id: string
          readonly attempts: number
          readonly body: string
        }>`
          SELECT webhook_id, event_id, attempts, body FROM (
            SELECT d.webhook_id, d.event_id, d.attempts, e.payload::text AS body, e.seq,
              row_number() OVER (PARTITION BY d.webhook_id ORDER BY e.seq) AS n
            FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
            WHERE d.webhook_id IN ${sql.in(leased.map((w) => w.id))}
              AND d.status = 'pending' AND d.next_attempt_at <= now()) x
          WHERE n <= ${limits.perWebhook}
          ORDER BY webhook_id, seq`.pipe(Effect.orDie)
        return yield* Effect.forEach(leased, (w) =>
          Effect.map(box.open(w.secret_ciphertext), (secret): ClaimedWebhook => ({
            id: w.id,
            org_id: w.org_id,
            environment: w.environment,
            url: w.url,
            secret,
            deliveries: deliveries.filter((d) => d.webhook_id === w.id).map((d) => ({
              event_id: d.event_id,
              attempts: d.attempts,
              body: d.body
            }))
          })))
      })

      const recordAttempt = Effect.fn("Webhooks.recordAttempt")(function*(
        webhook: ClaimedWebhook,
        delivery: ClaimedDelivery,
        attemptedAt: Date,
        result: AttemptResult
      ) {
        const attempt = delivery.attempts + 1
        const { delayMs, outcome, status } = judgeAttempt(attempt, result, policy.retryScale)
        const next = nextAttemptAt(sql, delayMs, "NULL")
        return yield* sql.withTransaction(Effect.gen(function*() {
          const recorded = yield* recordOnItem(
            sql,
            webhookTables,
            { where: sql`webhook_id = ${webhook.id} AND event_id = ${delivery.event_id}`, attempts: delivery.attempts },
            // A given-up delivery keeps its last due time; its attempt row says there is no next.
            { number: attempt, status, next: nextAttemptAt(sql, delayMs, "next_attempt_at"), at: attemptedAt },
            result,
            sql`, last_status = ${result.status_code}`
          )
          if (!recorded) return "stale" as const
          yield* sql`
            INSERT INTO webhook_attempts (webhook_id, event_id, attempt, attempted_at, finished_at, status_code, error, next_attempt_at)
            VALUES (${webhook.id}, ${delivery.event_id}, ${attempt}, ${attemptedAt}, now(), ${result.status_code},
              ${result.error}, ${next})`
          if (outcome === "gave-up") {
            yield* turnFailing(sql, webhookTables, webhook, {
              type: "webhook.failing",
              message: webhookFailingMessage(webhook, maxAttempts, delivery.event_id, result.error),
              data: { webhook_id: webhook.id, url: webhook.url, event_id: delivery.event_id, last_status: result.status_code, last_error: result.error }
            })
          }
          return outcome
        })).pipe(Effect.orDie)
      })

      const release = Effect.fn("Webhooks.release")(function*(webhookId: string) {
        yield* releaseLease(sql, webhookTables, webhookId)
      })

      return Webhooks.of({ create, list, remove, enable, target, listAlerts, claim, recordAttempt, release })
    })
  )
}
