import { Context, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import { NotFound, Unprocessable } from "../domain/errors.ts"
import { makeId } from "../domain/ids.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import {
  type Alert,
  isWebhookEventType,
  maxAttempts,
  minSecretLength,
  retryDelayAfter,
  type Webhook,
  type WebhookEventType,
  webhookEventTypes
} from "../domain/webhooks.ts"
import type { AttemptResult } from "../webhooks/delivery.ts"
import { WebhookConfig } from "../webhooks/config.ts"
import { SecretBox } from "../webhooks/secret-box.ts"
import { enqueueAlert } from "./notification-outbox.ts"
import { vetUrl } from "../webhooks/url-policy.ts"

export interface Tenant {
  readonly orgId: string
  readonly environment: Environment
}

export interface PageRequest {
  readonly limit: number
  readonly cursor: string | undefined
}

const webhookPrefix = "wh"
const alertPrefix = "alert"

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

export type AttemptOutcome = "delivered" | "retry" | "gave-up" | "stale"

/**
 * Webhooks, their outbox deliveries and the alerts they raise. Registration validates names,
 * secret and URL policy (422); the dispatcher side leases webhooks (one dispatcher at a time
 * per webhook, so its deliveries go out in order and no attempt runs twice concurrently) and
 * records each attempt with its result and the next attempt time.
 */
export class Webhooks extends Context.Service<Webhooks, {
  readonly create: (
    tenant: Tenant,
    input: { readonly url: string; readonly events: ReadonlyArray<string>; readonly secret: string }
  ) => Effect.Effect<Webhook, Unprocessable>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Webhook>>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, NotFound>
  /** Clears the failing state; what queued meanwhile is due at once, oldest first. */
  readonly enable: (tenant: Tenant, id: string) => Effect.Effect<Webhook, NotFound>
  /** The URL and the decrypted secret, for the test endpoint. */
  readonly target: (tenant: Tenant, id: string) => Effect.Effect<{ readonly url: string; readonly secret: string }, NotFound>
  readonly listAlerts: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Alert>>
  /** Leases up to `webhooks` webhooks with due deliveries, each with up to `perWebhook` of them. */
  readonly claim: (limits: { readonly webhooks: number; readonly perWebhook: number }) => Effect.Effect<ReadonlyArray<ClaimedWebhook>>
  readonly recordAttempt: (
    webhook: ClaimedWebhook,
    delivery: ClaimedDelivery,
    attemptedAt: Date,
    result: AttemptResult
  ) => Effect.Effect<AttemptOutcome>
  readonly release: (webhookId: string) => Effect.Effect<void>
}>()("signal-engine/store/Webhooks") {
  static readonly layer = Layer.effect(
    Webhooks,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const config = yield* WebhookConfig
      const box = yield* SecretBox
      // A lease covers a full claim even when every delivery times out, plus a margin; a
      // dispatcher that stops cleanly releases it at once, one that crashes lets it expire.
      const leaseMs = (perWebhook: number) => perWebhook * Duration.toMillis(config.timeout) + 5_000

      const create = Effect.fn("Webhooks.create")(function*(
        tenant: Tenant,
        input: { readonly url: string; readonly events: ReadonlyArray<string>; readonly secret: string }
      ) {
        const unknown = input.events.filter((e) => !isWebhookEventType(e))
        if (unknown.length > 0) {
          return yield* Unprocessable.of(
            `unknown event name(s): ${unknown.join(", ")}; expected some of ${webhookEventTypes.join(", ")}`,
            "unknown_event"
          )
        }
        if (input.events.length === 0) return yield* Unprocessable.of("events must name at least one event", "validation_error")
        if ([...input.secret].length < minSecretLength) {
          return yield* Unprocessable.of(`secret must have at least ${minSecretLength} characters`, "secret_too_short")
        }
        const verdict = yield* vetUrl(input.url, config.allowedHosts)
        if (verdict._tag === "Refused") return yield* Unprocessable.of(verdict.reason, "url_not_allowed")
        const events = webhookEventTypes.filter((t) => input.events.includes(t))
        const rows = yield* sql<WebhookRow>`
          INSERT INTO webhooks (id, org_id, environment, url, events, secret_ciphertext)
          VALUES (${makeId(webhookPrefix)}, ${tenant.orgId}, ${tenant.environment}, ${input.url},
            string_to_array(${events.join(",")}, ','), ${box.seal(input.secret)})
          RETURNING ${sql.literal(webhookColumns)}`.pipe(Effect.orDie)
        return toWebhook(rows[0]!)
      })

      const list = Effect.fn("Webhooks.list")(function*(tenant: Tenant, page: PageRequest) {
        const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
        const rows = yield* sql<WebhookRow>`
          SELECT ${sql.literal(webhookColumns)} FROM webhooks
          WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            ${after === undefined ? sql`` : sql`AND id < ${after}`}
          ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toWebhook), page.limit, (w) => w.id)
      })

      const notFound = (id: string) => NotFound.of(`webhook ${id} not found`)

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
        const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
        const rows = yield* sql<{
          readonly id: string
          readonly type: string
          readonly message: string
          readonly data: Readonly<Record<string, unknown>>
          readonly created_at: Date
        }>`
          SELECT id, type, message, data, created_at FROM alerts
          WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            ${after === undefined ? sql`` : sql`AND id < ${after}`}
          ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        return toPage(
          rows.map((r) => ({ ...r, data: { ...r.data }, created_at: new Date(r.created_at).toISOString() })),
          page.limit,
          (a) => a.id
        )
      })

      const claim = Effect.fn("Webhooks.claim")(function*(limits: { readonly webhooks: number; readonly perWebhook: number }) {
        // SKIP LOCKED: dispatchers of several nodes never wait for, nor take, each other's webhooks.
        const leased = yield* sql<{
          readonly id: string
          readonly org_id: string
          readonly environment: Environment
          readonly url: string
          readonly secret_ciphertext: string
        }>`
          WITH due AS (
            SELECT w.id FROM webhooks w
            WHERE w.enabled AND NOT w.failing AND w.leased_until < now()
              AND EXISTS (SELECT 1 FROM webhook_deliveries d
                WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.next_attempt_at <= now())
            ORDER BY w.leased_until
            LIMIT ${limits.webhooks}
            FOR UPDATE SKIP LOCKED)
          UPDATE webhooks w SET leased_until = now() + ${leaseMs(limits.perWebhook)}::double precision * interval '1 millisecond'
          FROM due WHERE w.id = due.id
          RETURNING w.id, w.org_id, w.environment, w.url, w.secret_ciphertext`.pipe(Effect.orDie)
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
        const delay = result.delivered ? undefined : retryDelayAfter(attempt, config.retryScale)
        const outcome: AttemptOutcome = result.delivered ? "delivered" : delay !== undefined ? "retry" : "gave-up"
        const next = delay === undefined ? sql`NULL::timestamptz` : sql`now() + ${delay}::double precision * interval '1 millisecond'`
        return yield* sql.withTransaction(Effect.gen(function*() {
          // Guarded on the attempt count: if this lease was lost (it expired) and another
          // dispatcher recorded the attempt, this one records nothing.
          const updated = yield* sql`
            UPDATE webhook_deliveries SET
              attempts = ${attempt},
              status = ${outcome === "delivered" ? "delivered" : outcome === "retry" ? "pending" : "failed"},
              next_attempt_at = coalesce(${next}, next_attempt_at),
              last_attempt_at = ${attemptedAt},
              last_status = ${result.status_code},
              last_error = ${result.error},
              delivered_at = ${result.delivered ? sql`now()` : sql`NULL`}
            WHERE webhook_id = ${webhook.id} AND event_id = ${delivery.event_id} AND attempts = ${delivery.attempts}
              AND status = 'pending'
            RETURNING 1 AS ok`
          if (updated.length === 0) return "stale" as const
          yield* sql`
            INSERT INTO webhook_attempts (webhook_id, event_id, attempt, attempted_at, finished_at, status_code, error, next_attempt_at)
            VALUES (${webhook.id}, ${delivery.event_id}, ${attempt}, ${attemptedAt}, now(), ${result.status_code},
              ${result.error}, ${next})`
          if (outcome !== "gave-up") return outcome
          // The webhook turns failing once; only the transition raises the alert.
          const turned = yield* sql`
            UPDATE webhooks SET failing = true, failing_since = now()
            WHERE id = ${webhook.id} AND NOT failing RETURNING id`
          if (turned.length > 0) {
            const message = `webhook ${webhook.id} (${webhook.url}) is failing: ${maxAttempts} attempts to deliver ` +
              `${delivery.event_id} failed (last: ${result.error ?? "unknown"}); deliveries are paused until it is ` +
              `re-enabled with POST /api/v1/webhooks/${webhook.id}/enable`
            const alertId = makeId(alertPrefix)
            const data = { webhook_id: webhook.id, url: webhook.url, event_id: delivery.event_id, last_status: result.status_code, last_error: result.error }
            yield* sql`
              INSERT INTO alerts (id, org_id, environment, type, message, data)
              VALUES (${alertId}, ${webhook.org_id}, ${webhook.environment}, 'webhook.failing', ${message},
                ${JSON.stringify(data)}::jsonb)`
            // Sent to the org's alert channels in the same transaction: once, with the alert.
            yield* enqueueAlert(sql, { id: alertId, org_id: webhook.org_id, environment: webhook.environment, type: "webhook.failing", message, data })
            yield* Effect.logWarning(message).pipe(Effect.annotateLogs({ org_id: webhook.org_id, webhook_id: webhook.id }))
          }
          return outcome
        })).pipe(Effect.orDie)
      })

      const release = Effect.fn("Webhooks.release")(function*(webhookId: string) {
        yield* sql`UPDATE webhooks SET leased_until = now() WHERE id = ${webhookId}`.pipe(Effect.orDie)
      })

      return Webhooks.of({ create, list, remove, enable, target, listAlerts, claim, recordAttempt, release })
    })
  )
}
