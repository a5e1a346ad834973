import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import type { TenantTargets } from "../domain/recipients.ts"

/** How `loadOutboxTargets` keys a tenant. */
export const tenantKey = (orgId: string, environment: Environment) => `${orgId}/${environment}`

interface TargetRow {
  readonly kind: "webhook" | "channel" | "alert"
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly events: ReadonlyArray<string> | null
}

/**
 * Every tenant's outbox targets, by `tenantKey`, in one statement: its enabled webhooks with
 * their subscriptions, its enabled channels, and its org's alert channels among those.
 */
export const loadOutboxTargets = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<TargetRow>`
      SELECT 'webhook' AS kind, id, org_id, environment, events FROM webhooks WHERE enabled
      UNION ALL
      SELECT 'channel', id, org_id, environment, NULL FROM channels WHERE enabled
      UNION ALL
      SELECT 'alert', c.id, a.org_id, c.environment, NULL
      FROM org_alert_channels a JOIN channels c ON c.id = a.channel_id
      WHERE c.enabled`,
    (rows) => {
      const tenants = new Map<string, {
        webhooks: Array<{ readonly id: string; readonly events: ReadonlyArray<string> }>
        channels: Set<string>
        alertChannels: Array<string>
      }>()
      for (const r of rows) {
        const key = tenantKey(r.org_id, r.environment)
        let t = tenants.get(key)
        if (t === undefined) tenants.set(key, t = { webhooks: [], channels: new Set(), alertChannels: [] })
        if (r.kind === "webhook") t.webhooks.push({ id: r.id, events: r.events ?? [] })
        else if (r.kind === "channel") t.channels.add(r.id)
        else t.alertChannels.push(r.id)
      }
      return tenants as ReadonlyMap<string, TenantTargets>
    }
  )

/**
 * Inside the caller's transaction: announces that a tenant's targets changed as a change of rules
 * is announced (migration 0016), since the rule cache holds both: the rules version goes up and
 * is notified when the transaction commits. Every node reloads, and a signal accepted after the
 * change carries the new version, so whichever node folds it addresses its events with the change.
 */
export const announceTargetsChanged = (sql: SqlClient.SqlClient) =>
  sql`
    WITH bumped AS (UPDATE rules_version SET version = version + 1 RETURNING version)
    SELECT pg_notify('signal_engine_rules', version::text) FROM bumped`

/** A write of targets (`write`) and its announcement, in one transaction. */
export const changingTargets = <A, E, R>(sql: SqlClient.SqlClient, write: Effect.Effect<A, E, R>) =>
  sql.withTransaction(Effect.tap(write, () => announceTargetsChanged(sql)))
