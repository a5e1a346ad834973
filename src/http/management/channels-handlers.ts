import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { render } from "../../domain/notification-text.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import type { ApiKeyPrincipal } from "../../domain/principal.ts"
import { NotificationConfig } from "../../notifications/config.ts"
import { Mailer } from "../../notifications/mailer.ts"
import { sendMessage } from "../../notifications/send.ts"
import { Channels } from "../../store/channels-repo.ts"
import type { Tenant } from "../../store/webhooks-repo.ts"
import { WebhookConfig } from "../../webhooks/config.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"

const tenant = (p: ApiKeyPrincipal): Tenant => ({ orgId: p.orgId, environment: p.environment })

const page = (query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) => ({
  limit: query.limit ?? defaultPageSize,
  cursor: query.cursor
})

export const ChannelsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "channels",
  Effect.fn(function*(handlers) {
    const channels = serviceOnTheWire(yield* Channels)
    const config = yield* NotificationConfig
    const webhookConfig = yield* WebhookConfig
    const mailer = yield* Mailer
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => channels.list(tenant(p), page(query))))
      .handle("create", ({ payload }) => ApiPrincipal.use((p) => channels.create(tenant(p), payload)))
      .handle("get", ({ params }) => ApiPrincipal.use((p) => channels.get(tenant(p), params.id)))
      .handle("update", ({ params, payload }) => ApiPrincipal.use((p) => channels.update(tenant(p), params.id, payload)))
      .handle("delete", ({ params }) => ApiPrincipal.use((p) => channels.remove(tenant(p), params.id)))
      .handle("test", ({ params }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            const { channel, target } = yield* channels.target(tenant(p), params.id)
            const message = render({
              facts: { type: "test", ts: new Date().toISOString(), data: { channel_name: channel.name } },
              firings: 1,
              summary: false,
              windowSeconds: channel.coalesce_seconds,
              userLabel: undefined,
              baseUrl: config.publicBaseUrl
            })
            return yield* sendMessage(target, message).pipe(
              Effect.provideService(WebhookConfig, webhookConfig),
              Effect.provideService(Mailer, mailer)
            )
          })
        ))
  })
)
