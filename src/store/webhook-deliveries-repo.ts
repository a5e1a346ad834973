import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import type { WebhookEventType } from "../domain/notices.ts"
import { type WebhookDelivery, WebhookNotFound } from "../domain/webhooks.ts"
import type { PageRequest, Tenant } from "./tenant-pages.ts"

interface Row {
  readonly seq: string
  readonly event_id: string
  readonly type: WebhookEventType
  readonly status: "pending" | "delivered" | "failed"
  readonly created_at: Date
  readonly delivered_at: Date | null
  readonly next_attempt_at: Date
  readonly attempts: ReadonlyArray<{
    readonly attempt: number
    readonly attempted_at: string
    readonly finished_at: string
    readonly status_code: number | null
    readonly error: string | null
    readonly next_attempt_at: string | null
  }>
}

const iso = (d: Date | string) => new Date(d).toISOString()

/** What was delivered to a webhook and how each attempt went: the read side of the outbox. */
export class WebhookDeliveries extends Context.Service<WebhookDeliveries, {
  /** The webhook's deliveries, newest event first, each with its attempts. */
  readonly list: (tenant: Tenant, webhookId: string, page: PageRequest) => Effect.Effect<Page<WebhookDelivery>, WebhookNotFound>
}>()("signal-engine/store/WebhookDeliveries") {
  static readonly layer = Layer.effect(
    WebhookDeliveries,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const list = Effect.fn("WebhookDeliveries.list")(function*(tenant: Tenant, webhookId: string, page: PageRequest) {
        const owned = yield* sql`SELECT 1 FROM webhooks
          WHERE id = ${webhookId} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}`.pipe(Effect.orDie)
        if (owned.length === 0) return yield* new WebhookNotFound(webhookId)
        // Events are ordered by the outbox's sequence (their ids are content hashes, not times).
        const after = page.cursor === undefined || page.cursor === "" ? undefined : decodeCursor(page.cursor)
        const rows = yield* sql<Row>`
          SELECT e.seq::text AS seq, d.event_id, e.type, d.status, d.created_at, d.delivered_at, d.next_attempt_at,
            coalesce((SELECT json_agg(json_build_object(
                'attempt', a.attempt, 'attempted_at', a.attempted_at, 'finished_at', a.finished_at,
                'status_code', a.status_code, 'error', a.error, 'next_attempt_at', a.next_attempt_at) ORDER BY a.attempt)
              FROM webhook_attempts a WHERE a.webhook_id = d.webhook_id AND a.event_id = d.event_id), '[]') AS attempts
          FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
          WHERE d.webhook_id = ${webhookId}
            ${after === undefined || !/^\d+$/.test(after) ? sql`` : sql`AND e.seq < ${after}::bigint`}
          ORDER BY e.seq DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        const page_ = toPage(rows, page.limit, (r) => r.seq)
        return {
          ...page_,
          data: page_.data.map((r): WebhookDelivery => ({
            event_id: r.event_id,
            type: r.type,
            status: r.status,
            created_at: iso(r.created_at),
            delivered_at: r.delivered_at === null ? null : iso(r.delivered_at),
            next_attempt_at: r.status === "pending" ? iso(r.next_attempt_at) : null,
            attempts: r.attempts.map((a) => ({
              attempt: a.attempt,
              attempted_at: iso(a.attempted_at),
              finished_at: iso(a.finished_at),
              status_code: a.status_code,
              error: a.error,
              next_attempt_at: a.next_attempt_at === null ? null : iso(a.next_attempt_at)
            }))
          }))
        }
      })
      return WebhookDeliveries.of({ list })
    })
  )
}
