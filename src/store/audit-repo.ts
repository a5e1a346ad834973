import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type AuditEntry, type AuditRecord, type AuditResource, redact } from "../domain/audit.ts"
import type { Environment } from "../domain/environments.ts"
import { makeId } from "../domain/ids.ts"
import { webhookEventId } from "../domain/notices.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import { snapshotQuery } from "./audit-snapshots.ts"
import type { PageRequest } from "./tenant-pages.ts"

export interface AuditFilter {
  readonly environments: ReadonlyArray<Environment>
  readonly action?: string | undefined
  readonly resource_type?: string | undefined
  readonly resource_id?: string | undefined
  readonly actor_id?: string | undefined
  readonly since?: string | undefined
  readonly until?: string | undefined
}

interface Row {
  readonly id: string
  readonly ts: Date
  readonly environment: Environment
  readonly actor_type: "api_key" | "user"
  readonly actor_id: string
  readonly action: string
  readonly resource_type: string
  readonly resource_id: string | null
  readonly before: Record<string, unknown> | null
  readonly after: Record<string, unknown> | null
  readonly ip: string | null
  readonly user_agent: string | null
  readonly request_id: string | null
}

const toEntry = (r: Row): AuditEntry => ({
  id: r.id,
  ts: new Date(r.ts).toISOString(),
  environment: r.environment,
  actor: { type: r.actor_type, id: r.actor_id },
  action: r.action,
  resource_type: r.resource_type,
  resource_id: r.resource_id,
  before: r.before,
  after: r.after,
  ip: r.ip,
  user_agent: r.user_agent,
  request_id: r.request_id
})

/** The webhook event type every entry is also raised as, for forwarding to a SIEM. */
export const auditEventType = "audit.recorded"

/**
 * The audit log. `record` writes in the caller's transaction when there is one (the change's:
 * src/http/audit-trail.ts opens it), and raises the entry as an `audit.recorded` webhook event
 * when webhooks of the org's environment subscribe to it, in the same transaction. Sign-ins and role
 * changes (to come with SSO) call `record` the same way. SQL failures are defects.
 */
export class AuditLog extends Context.Service<AuditLog, {
  readonly record: (entry: AuditRecord) => Effect.Effect<AuditEntry>
  /** A resource's fields as an entry keeps them (secrets redacted), or null when it does not exist. */
  readonly snapshot: (orgId: string, resource: AuditResource, id: string) => Effect.Effect<Record<string, unknown> | null>
  /** Newest first, filtered, paged by id. */
  readonly list: (orgId: string, filter: AuditFilter, page: PageRequest) => Effect.Effect<Page<AuditEntry>>
  /** Deletes the entries older than `cutoff` (the retention); the only deletion the table allows. */
  readonly purge: (cutoff: Date) => Effect.Effect<number>
}>()("signal-engine/store/AuditLog") {
  static readonly layer = Layer.effect(
    AuditLog,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const record = Effect.fn("AuditLog.record")(function*(e: AuditRecord) {
        const id = makeId("aud")
        const json = (v: unknown) => (v === null ? null : JSON.stringify(v))
        const rows = yield* sql<Row>`
          INSERT INTO audit_log (id, org_id, environment, actor_type, actor_id, action, resource_type, resource_id,
            before, after, ip, user_agent, request_id)
          VALUES (${id}, ${e.orgId}, ${e.environment}, ${e.actor.type}, ${e.actor.id}, ${e.action}, ${e.resource.type},
            ${e.resource.id}, ${json(e.before)}::jsonb, ${json(e.after)}::jsonb, ${e.origin.ip}, ${e.origin.user_agent},
            ${e.origin.request_id})
          RETURNING *`.pipe(Effect.orDie)
        const entry = toEntry(rows[0]!)
        const eventId = webhookEventId(auditEventType, id)
        const payload = JSON.stringify({ id: eventId, type: auditEventType, org_id: e.orgId, ts: entry.ts, data: entry })
        // Raised only where a webhook forwards the log: the entry itself is the record, and the
        // outbox (GET /webhook-events, the dashboard's alerts) is not filled with every change.
        yield* sql`
          WITH subscribed AS (
            SELECT id FROM webhooks
            WHERE org_id = ${e.orgId} AND environment = ${e.environment} AND enabled AND ${auditEventType} = ANY(events)),
          event AS (
            INSERT INTO webhook_events (id, org_id, environment, type, payload)
            SELECT ${eventId}, ${e.orgId}, ${e.environment}, ${auditEventType}, ${payload}::json
            WHERE EXISTS (SELECT 1 FROM subscribed)
            RETURNING id)
          INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at)
          SELECT subscribed.id, event.id, now() FROM subscribed, event`.pipe(Effect.orDie)
        return entry
      })

      const snapshot = Effect.fn("AuditLog.snapshot")(function*(orgId: string, resource: AuditResource, id: string) {
        const rows = yield* snapshotQuery(sql, orgId, resource, id).pipe(Effect.orDie)
        const fields = rows[0]?.fields
        return fields === undefined || fields === null ? null : redact(resource, fields)
      })

      const list = Effect.fn("AuditLog.list")(function*(orgId: string, f: AuditFilter, page: PageRequest) {
        const after = page.cursor === undefined || page.cursor === "" ? undefined : decodeCursor(page.cursor)
        const rows = yield* sql<Row>`
          SELECT * FROM audit_log
          WHERE org_id = ${orgId} AND environment IN ${sql.in(f.environments)}
            ${f.action === undefined ? sql`` : sql`AND action = ${f.action}`}
            ${f.resource_type === undefined ? sql`` : sql`AND resource_type = ${f.resource_type}`}
            ${f.resource_id === undefined ? sql`` : sql`AND resource_id = ${f.resource_id}`}
            ${f.actor_id === undefined ? sql`` : sql`AND actor_id = ${f.actor_id}`}
            ${f.since === undefined ? sql`` : sql`AND ts >= ${f.since}::timestamptz`}
            ${f.until === undefined ? sql`` : sql`AND ts < ${f.until}::timestamptz`}
            ${after === undefined ? sql`` : sql`AND id < ${after}`}
          ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toEntry), page.limit, (e) => e.id)
      })

      const purge = (cutoff: Date) =>
        sql<{ readonly purged: string }>`SELECT audit_log_purge(${cutoff}) AS purged`.pipe(
          Effect.orDie,
          Effect.map((rows) => Number(rows[0]?.purged ?? 0))
        )

      return AuditLog.of({ record, snapshot, list, purge })
    })
  )
}
