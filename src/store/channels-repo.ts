import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import {
  type Channel,
  type ChannelDraft,
  ChannelInUse,
  ChannelInvalid,
  type ChannelKind,
  ChannelNotFound,
  channelProblems,
  type ChannelTarget,
  coalesceBounds,
  isChatKind,
  redactUrl,
  SmtpNotConfigured,
  UnknownAlertChannels
} from "../domain/channels.ts"
import { makeId } from "../domain/ids.ts"
import type { Page } from "../domain/pagination.ts"
import { UrlRefused } from "../domain/webhooks.ts"
import { DeliveryPolicy } from "./delivery-policy.ts"
import { channelTables, reenableTarget } from "./outbox-dispatch.ts"
import { changingTargets } from "./outbox-targets.ts"
import { SecretBox } from "./secret-box.ts"
import { type PageRequest, type Tenant, tenantPage } from "./tenant-pages.ts"

interface ChannelRow {
  readonly id: string
  readonly name: string
  readonly kind: ChannelKind
  readonly url_origin: string | null
  readonly addresses: ReadonlyArray<string>
  readonly coalesce_s: number
  readonly enabled: boolean
  readonly failing: boolean
  readonly created_at: Date
  readonly updated_at: Date | null
}
const columns = "id, name, kind, url_origin, addresses, coalesce_s, enabled, failing, created_at, updated_at"
const toChannel = (r: ChannelRow): Channel => ({
  id: r.id,
  name: r.name,
  kind: r.kind,
  url: r.url_origin,
  addresses: [...r.addresses],
  coalesce_seconds: r.coalesce_s,
  enabled: r.enabled,
  failing: r.failing,
  created_at: new Date(r.created_at).toISOString(),
  updated_at: r.updated_at === null ? null : new Date(r.updated_at).toISOString()
})

export interface ChannelInput {
  readonly name: string
  readonly kind: ChannelKind
  readonly url?: string | undefined
  readonly addresses?: ReadonlyArray<string> | undefined
  readonly coalesce_seconds?: number | undefined
}

export interface ChannelPatch {
  readonly name?: string | undefined
  readonly url?: string | undefined
  readonly addresses?: ReadonlyArray<string> | undefined
  readonly coalesce_seconds?: number | undefined
  readonly enabled?: boolean | undefined
}

/** Why a channel's fields are refused. */
type ChannelProblem = ChannelInvalid | UrlRefused | SmtpNotConfigured

/**
 * Notification channels of a tenant (org and environment), and the org's choice of channels for
 * admin alerts. A chat URL is validated against the webhooks' URL policy (SSRF, DeliveryPolicy)
 * and sealed with their key; only its origin is kept in clear, for display.
 */
export class Channels extends Context.Service<Channels, {
  readonly create: (tenant: Tenant, input: ChannelInput) => Effect.Effect<Channel, ChannelProblem>
  readonly list: (tenant: Tenant, page: PageRequest) => Effect.Effect<Page<Channel>>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Channel, ChannelNotFound>
  /** Changes the fields given; `enabled: true` also clears `failing` and makes what queued due at once. */
  readonly update: (tenant: Tenant, id: string, patch: ChannelPatch) => Effect.Effect<Channel, ChannelNotFound | ChannelProblem>
  /** 409 channel_in_use while a rule names it. */
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, ChannelNotFound | ChannelInUse>
  readonly target: (tenant: Tenant, id: string) => Effect.Effect<{ readonly channel: Channel; readonly target: ChannelTarget }, ChannelNotFound>
  /** The ids among `ids` that are not channels of the tenant. */
  readonly missing: (tenant: Tenant, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  readonly alertChannels: (orgId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Replaces the org's alert channels; ids that are not channels of the org are 422. */
  readonly setAlertChannels: (orgId: string, ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>, UnknownAlertChannels>
}>()("signal-engine/store/Channels") {
  static readonly layer = Layer.effect(
    Channels,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const box = yield* SecretBox
      const policy = yield* DeliveryPolicy

      /** The draft's problems (422), the URL policy included. */
      const check = Effect.fnUntraced(function*(draft: ChannelDraft, newUrl: string | undefined) {
        const problems = [...channelProblems(draft)]
        if (problems.length === 0 && newUrl !== undefined) {
          const refusal = yield* policy.urlRefusal(newUrl)
          if (refusal !== undefined) return yield* new UrlRefused(refusal, "url")
        }
        if (problems.length === 0 && draft.kind === "email" && !policy.emailConfigured) return yield* new SmtpNotConfigured()
        if (problems.length > 0) return yield* new ChannelInvalid(problems)
      })

      const textArray = (items: ReadonlyArray<string>) => sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(items)}::jsonb))`
      const notFound = (id: string) => new ChannelNotFound(id)
      const where = (tenant: Tenant, id: string) => sql`id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}`

      const create = Effect.fn("Channels.create")(function*(tenant: Tenant, input: ChannelInput) {
        const draft: ChannelDraft = {
          name: input.name,
          kind: input.kind,
          url: input.url,
          addresses: input.addresses ?? [],
          coalesce_seconds: input.coalesce_seconds ?? coalesceBounds.default
        }
        yield* check(draft, draft.url)
        const url = draft.url
        const rows = yield* changingTargets(
          sql,
          sql<ChannelRow>`
          INSERT INTO channels (id, org_id, environment, name, kind, url_ciphertext, url_origin, addresses, coalesce_s)
          VALUES (${makeId("ch")}, ${tenant.orgId}, ${tenant.environment}, ${draft.name.trim()}, ${draft.kind},
            ${url === undefined ? null : box.seal(url)}, ${url === undefined ? null : redactUrl(url)},
            ${textArray(draft.addresses)}, ${draft.coalesce_seconds})
          RETURNING ${sql.literal(columns)}`
        ).pipe(Effect.orDie)
        return toChannel(rows[0]!)
      })

      const list = Effect.fn("Channels.list")(function*(tenant: Tenant, page: PageRequest) {
        return yield* tenantPage(sql, { table: "channels", columns }, tenant, page, toChannel)
      })

      const getRow = (tenant: Tenant, id: string) =>
        sql<ChannelRow & { readonly url_ciphertext: string | null }>`
          SELECT ${sql.literal(columns)}, url_ciphertext FROM channels WHERE ${where(tenant, id)}`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => rows[0] === undefined ? notFound(id) : Effect.succeed(rows[0]))
        )

      const get = Effect.fn("Channels.get")(function*(tenant: Tenant, id: string) {
        return toChannel(yield* getRow(tenant, id))
      })

      const update = Effect.fn("Channels.update")(function*(tenant: Tenant, id: string, patch: ChannelPatch) {
        const current = yield* getRow(tenant, id)
        const chat = isChatKind(current.kind)
        yield* check({
          name: patch.name ?? current.name,
          kind: current.kind,
          // A chat channel has its stored URL; only a new one is vetted here (the stored one was
          // at creation, and is again at every attempt).
          url: patch.url ?? (chat ? "stored" : undefined),
          addresses: patch.addresses ?? current.addresses,
          coalesce_seconds: patch.coalesce_seconds ?? current.coalesce_s
        }, patch.url)
        const url = patch.url
        const rows = yield* changingTargets(
          sql,
          Effect.gen(function*() {
            const updated = yield* sql<ChannelRow>`
            UPDATE channels SET
              name = ${patch.name?.trim() ?? current.name},
              url_ciphertext = ${url === undefined ? current.url_ciphertext : box.seal(url)},
              url_origin = ${url === undefined ? current.url_origin : redactUrl(url)},
              addresses = ${textArray(patch.addresses ?? current.addresses)},
              coalesce_s = ${patch.coalesce_seconds ?? current.coalesce_s},
              enabled = ${patch.enabled ?? current.enabled},
              updated_at = now()
            WHERE ${where(tenant, id)}
            RETURNING ${sql.literal(columns)}`
            // Enabling a failing channel resumes it as POST /webhooks/:id/enable resumes a webhook.
            return patch.enabled === true && current.failing && updated.length > 0
              ? yield* reenableTarget<ChannelRow>(sql, channelTables, tenant, id, columns)
              : updated
          })
        ).pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound(id)
        return toChannel(rows[0]!)
      })

      const remove = Effect.fn("Channels.remove")(function*(tenant: Tenant, id: string) {
        const users = yield* sql<{ readonly id: string }>`
          SELECT id FROM rules WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            AND jsonb_typeof(action_config->'channels') = 'array' AND action_config->'channels' ? ${id}
          ORDER BY id LIMIT 10`.pipe(Effect.orDie)
        if (users.length > 0) {
          return yield* new ChannelInUse(id, users.map((r) => r.id))
        }
        // Its queued messages and its place among the org's alert channels go with it (cascade).
        const rows = yield* changingTargets(sql, sql`DELETE FROM channels WHERE ${where(tenant, id)} RETURNING id`).pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound(id)
      })

      const target = Effect.fn("Channels.target")(function*(tenant: Tenant, id: string) {
        const row = yield* getRow(tenant, id)
        const url = row.url_ciphertext === null ? null : yield* box.open(row.url_ciphertext)
        return { channel: toChannel(row), target: { kind: row.kind, url, addresses: row.addresses } }
      })

      const missing = Effect.fn("Channels.missing")(function*(tenant: Tenant, ids: ReadonlyArray<string>) {
        if (ids.length === 0) return []
        const rows = yield* sql<{ readonly id: string }>`
          SELECT id FROM channels WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            AND id IN ${sql.in([...ids])}`.pipe(Effect.orDie)
        const found = new Set(rows.map((r) => r.id))
        return ids.filter((i) => !found.has(i))
      })

      const alertChannels = Effect.fn("Channels.alertChannels")(function*(orgId: string) {
        const rows = yield* sql<{ readonly channel_id: string }>`
          SELECT channel_id FROM org_alert_channels WHERE org_id = ${orgId} ORDER BY channel_id`.pipe(Effect.orDie)
        return rows.map((r) => r.channel_id)
      })

      const setAlertChannels = Effect.fn("Channels.setAlertChannels")(function*(orgId: string, ids: ReadonlyArray<string>) {
        const wanted = [...new Set(ids)]
        const known = wanted.length === 0 ? [] : yield* sql<{ readonly id: string }>`
          SELECT id FROM channels WHERE org_id = ${orgId} AND id IN ${sql.in(wanted)}`.pipe(Effect.orDie)
        const unknown = wanted.filter((id) => !known.some((k) => k.id === id))
        if (unknown.length > 0) {
          return yield* new UnknownAlertChannels(unknown)
        }
        yield* changingTargets(
          sql,
          Effect.gen(function*() {
            yield* sql`DELETE FROM org_alert_channels WHERE org_id = ${orgId}`
            if (wanted.length > 0) {
              yield* sql`INSERT INTO org_alert_channels (org_id, channel_id)
              SELECT ${orgId}, jsonb_array_elements_text(${JSON.stringify(wanted)}::jsonb)`
            }
          })
        ).pipe(Effect.orDie)
        return wanted.sort()
      })

      return Channels.of({ create, list, get, update, remove, target, missing, alertChannels, setAlertChannels })
    })
  )
}
