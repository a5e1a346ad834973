import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { webhookFailingMessage } from "../domain/failing-alerts.ts"
import type { Environment } from "../domain/environments.ts"
import { type AttemptResult, maxAttempts } from "../domain/delivery.ts"
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
import { claimDue, type OutboxDispatch, recordOutboxAttempt, reenableTarget, releaseLease, webhookTables } from "./outbox-dispatch.ts"
import { DeliveryPolicy } from "./delivery-policy.ts"
import { changingTargets } from "./outbox-targets.ts"
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

/** A webhook as the lease answers it, before its secret is opened. */
interface LeasedWebhook {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly url: string
  readonly secret_ciphertext: string
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
export class Webhooks extends Context.Service<
  Webhooks,
  {
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
  } & OutboxDispatch<ClaimedWebhook, ClaimedDelivery, { readonly webhooks: number; readonly perWebhook: number }>
>()(
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
        const rows = yield* changingTargets(
          sql,
          sql<WebhookRow>`
          INSERT INTO webhooks (id, org_id, environment, url, events, secret_ciphertext)
          VALUES (${makeId(webhookPrefix)}, ${tenant.orgId}, ${tenant.environment}, ${input.url},
            string_to_array(${events.join(",")}, ','), ${box.seal(input.secret)})
          RETURNING ${sql.literal(webhookColumns)}`
        ).pipe(Effect.orDie)
        return toWebhook(rows[0]!)
      })

      const list = Effect.fn("Webhooks.list")(function*(tenant: Tenant, page: PageRequest) {
        return yield* tenantPage(sql, { table: "webhooks", columns: webhookColumns }, tenant, page, toWebhook)
      })

      const notFound = (id: string) => new WebhookNotFound(id)

      const remove = Effect.fn("Webhooks.remove")(function*(tenant: Tenant, id: string) {
        // Its deliveries and attempts go with it (cascade): a deleted webhook gets nothing more.
        const rows = yield* changingTargets(
          sql,
          sql`DELETE FROM webhooks WHERE id = ${id} AND org_id = ${tenant.orgId}
          AND environment = ${tenant.environment} RETURNING id`
        ).pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound(id)
      })

      const enable = Effect.fn("Webhooks.enable")(function*(tenant: Tenant, id: string) {
        const rows = yield* changingTargets(sql, reenableTarget<WebhookRow>(sql, webhookTables, tenant, id, webhookColumns)).pipe(Effect.orDie)
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
        return yield* claimDue(
          sql,
          webhookTables,
          { targets: limits.webhooks, perTarget: limits.perWebhook, attemptTimeout: policy.attemptTimeout },
          {
            columns: ["id", "org_id", "environment", "url", "secret_ciphertext"],
            dueItems: (ids) =>
              sql<ClaimedDelivery & { readonly target_id: string }>`
                SELECT target_id, event_id, attempts, body FROM (
                  SELECT d.webhook_id AS target_id, d.event_id, d.attempts, e.payload::text AS body, e.seq,
                    row_number() OVER (PARTITION BY d.webhook_id ORDER BY e.seq) AS n
                  FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
                  WHERE d.webhook_id IN ${sql.in(ids)}
                    AND d.status = 'pending' AND d.next_attempt_at <= now()) x
                WHERE n <= ${limits.perWebhook}
                ORDER BY target_id, seq`,
            toTarget: (w: LeasedWebhook, deliveries) =>
              Effect.map(box.open(w.secret_ciphertext), (secret): ClaimedWebhook => ({
                id: w.id,
                org_id: w.org_id,
                environment: w.environment,
                url: w.url,
                secret,
                deliveries: deliveries.map(({ target_id: _, ...d }) => d)
              }))
          }
        )
      })

      const recordAttempt = Effect.fn("Webhooks.recordAttempt")(function*(
        webhook: ClaimedWebhook,
        delivery: ClaimedDelivery,
        attemptedAt: Date,
        result: AttemptResult
      ) {
        return yield* recordOutboxAttempt(sql, webhookTables, policy.retryScale, {
          target: webhook,
          item: { where: sql`webhook_id = ${webhook.id} AND event_id = ${delivery.event_id}`, attempts: delivery.attempts },
          attemptedAt,
          result,
          extra: sql`, last_status = ${result.status_code}`,
          alongside: (attempt, next) =>
            sql`
              INSERT INTO webhook_attempts (webhook_id, event_id, attempt, attempted_at, finished_at, status_code, error, next_attempt_at)
              VALUES (${webhook.id}, ${delivery.event_id}, ${attempt}, ${attemptedAt}, now(), ${result.status_code},
                ${result.error}, ${next})`,
          failing: () => ({
            type: "webhook.failing",
            message: webhookFailingMessage(webhook, maxAttempts, delivery.event_id, result.error),
            data: { webhook_id: webhook.id, url: webhook.url, event_id: delivery.event_id, last_status: result.status_code, last_error: result.error }
          })
        })
      })

      const release = Effect.fn("Webhooks.release")(function*(webhookId: string) {
        yield* releaseLease(sql, webhookTables, webhookId)
      })

      return Webhooks.of({ create, list, remove, enable, target, listAlerts, claim, recordAttempt, release })
    })
  )
}
