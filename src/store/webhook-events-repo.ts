import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import type { WebhookEventType } from "../domain/notices.ts"
import type { RaisedEvent } from "../domain/webhooks.ts"
import type { PageRequest, Tenant } from "./tenant-pages.ts"

/**
 * What the service raised for an org (the outbox's events: budget warnings, anomalies, rule
 * firings, sessions), whether or not a webhook subscribes to them: every event is written to the
 * outbox in the transaction of what caused it, and only its deliveries depend on subscriptions.
 */
export class WebhookEvents extends Context.Service<WebhookEvents, {
  /** The tenant's events, newest first, optionally of one type. */
  readonly list: (
    tenant: Tenant,
    type: WebhookEventType | undefined,
    page: PageRequest
  ) => Effect.Effect<Page<RaisedEvent>>
}>()("signal-engine/store/WebhookEvents") {
  static readonly layer = Layer.effect(
    WebhookEvents,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const list = Effect.fn("WebhookEvents.list")(function*(tenant: Tenant, type: WebhookEventType | undefined, page: PageRequest) {
        // Newest first by the outbox's sequence: event ids are hashes of their causes, not times.
        const after = page.cursor === undefined || page.cursor === "" ? undefined : decodeCursor(page.cursor)
        const rows = yield* sql<{ readonly seq: string; readonly payload: string }>`
          SELECT seq::text AS seq, payload::text AS payload FROM webhook_events
          WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            ${type === undefined ? sql`` : sql`AND type = ${type}`}
            ${after === undefined || !/^\d+$/.test(after) ? sql`` : sql`AND seq < ${after}::bigint`}
          ORDER BY seq DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        const found = toPage(rows, page.limit, (r) => r.seq)
        return { ...found, data: found.data.map((r) => JSON.parse(r.payload) as RaisedEvent) }
      })
      return WebhookEvents.of({ list })
    })
  )
}
