import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { randomBytes } from "node:crypto"
import { defaultPageSize } from "../../domain/pagination.ts"
import type { ApiKeyPrincipal } from "../../domain/principal.ts"
import { webhookEventId } from "../../domain/notices.ts"
import { WebhookEvents } from "../../store/webhook-events-repo.ts"
import { WebhookDeliveries } from "../../store/webhook-deliveries-repo.ts"
import { type Tenant, Webhooks } from "../../store/webhooks-repo.ts"
import { WebhookConfig } from "../../webhooks/config.ts"
import { deliver } from "../../webhooks/delivery.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"

const tenant = (p: ApiKeyPrincipal): Tenant => ({ orgId: p.orgId, environment: p.environment })

const page = (query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) => ({
  limit: query.limit ?? defaultPageSize,
  cursor: query.cursor
})

/** The body of a test delivery: a session.started envelope about a session that does not exist. */
const testPayload = (webhookId: string, orgId: string, now: Date) => {
  const nonce = randomBytes(8).toString("hex")
  const ts = now.toISOString()
  return JSON.stringify({
    id: webhookEventId("session.started", `test:${webhookId}:${nonce}`),
    type: "session.started",
    org_id: orgId,
    ts,
    data: {
      session_id: `sess_test_${nonce}`,
      user_id: "user_test",
      adapter: "webhook-test",
      client_session_id: "webhook-test",
      project_id: null,
      started_at: ts
    }
  })
}

export const WebhooksHandlers = HttpApiBuilder.group(
  ManagementApi,
  "webhooks",
  Effect.fn(function*(handlers) {
    const webhooks = serviceOnTheWire(yield* Webhooks)
    const config = yield* WebhookConfig
    const deliveries = serviceOnTheWire(yield* WebhookDeliveries)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => webhooks.list(tenant(p), page(query))))
      .handle("deliveries", ({ params, query }) => ApiPrincipal.use((p) => deliveries.list(tenant(p), params.id, page(query))))
      .handle("create", ({ payload }) => ApiPrincipal.use((p) => webhooks.create(tenant(p), payload)))
      .handle("delete", ({ params }) => ApiPrincipal.use((p) => webhooks.remove(tenant(p), params.id)))
      .handle("enable", ({ params }) => ApiPrincipal.use((p) => webhooks.enable(tenant(p), params.id)))
      .handle("test", ({ params }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            const target = yield* webhooks.target(tenant(p), params.id)
            const now = new Date(yield* Clock.currentTimeMillis)
            return yield* deliver(target.url, testPayload(params.id, p.orgId, now), target.secret, config)
          })
        ))
  })
)

export const AlertsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "alerts",
  Effect.fn(function*(handlers) {
    const webhooks = serviceOnTheWire(yield* Webhooks)
    return handlers.handle("list", ({ query }) => ApiPrincipal.use((p) => webhooks.listAlerts(tenant(p), page(query))))
  })
)

export const WebhookEventsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "webhookEvents",
  Effect.fn(function*(handlers) {
    const events = yield* WebhookEvents
    return handlers.handle("list", ({ query }) => ApiPrincipal.use((p) => events.list(tenant(p), query.type, page(query))))
  })
)
