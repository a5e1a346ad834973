import { Duration, Effect } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import type { AttemptOutcome, AttemptResult } from "../domain/delivery.ts"
import type { Environment } from "../domain/environments.ts"
import { makeId } from "../domain/ids.ts"
import { enqueueAlert } from "./notification-outbox.ts"

/**
 * What the webhook and notification outboxes share on the dispatcher's side: a target (a webhook,
 * a channel) is leased with SKIP LOCKED, so one dispatcher across nodes has it at a time and its
 * items go out in order; released at once by a dispatcher that stops cleanly, or left to expire
 * by one that crashed; and turned failing, once, with an alert, when an item is given up.
 */
/** The dispatcher's side of an outbox, of webhooks (Webhooks) or channels (Notifications). */
export interface OutboxDispatch<Target, Item, Limits> {
  /** Leases targets with due items (as many as `limits` says), each with its due items, oldest first. */
  readonly claim: (limits: Limits) => Effect.Effect<ReadonlyArray<Target>>
  /** Records an attempt and when the next is due; `stale` when the lease was lost and another recorded it. */
  readonly recordAttempt: (target: Target, item: Item, attemptedAt: Date, result: AttemptResult) => Effect.Effect<AttemptOutcome>
  readonly release: (targetId: string) => Effect.Effect<void>
}

/** Where an outbox lives: its targets' table, its items' table, and the items' column naming their target. */
export interface OutboxTables {
  readonly targets: "webhooks" | "channels"
  readonly items: "webhook_deliveries" | "notifications"
  readonly targetColumn: "webhook_id" | "channel_id"
}

export const webhookTables: OutboxTables = { targets: "webhooks", items: "webhook_deliveries", targetColumn: "webhook_id" }
export const channelTables: OutboxTables = { targets: "channels", items: "notifications", targetColumn: "channel_id" }

// A lease covers a full claim even when every attempt times out, plus a margin.
const leaseMs = (perTarget: number, attemptTimeout: Duration.Duration) => perTarget * Duration.toMillis(attemptTimeout) + 5_000

/** Leases up to `limit` enabled, healthy targets with due items; `returning` lists the columns wanted of each. */
export const leaseDue = <Row extends object>(
  sql: SqlClient.SqlClient,
  tables: OutboxTables,
  limits: { readonly targets: number; readonly perTarget: number; readonly attemptTimeout: Duration.Duration },
  returning: ReadonlyArray<string>
) =>
  sql<Row>`
    WITH due AS (
      SELECT t.id FROM ${sql(tables.targets)} t
      WHERE t.enabled AND NOT t.failing AND t.leased_until < now()
        AND EXISTS (SELECT 1 FROM ${sql(tables.items)} i
          WHERE i.${sql(tables.targetColumn)} = t.id AND i.status = 'pending' AND i.next_attempt_at <= now())
      ORDER BY t.leased_until
      LIMIT ${limits.targets}
      FOR UPDATE SKIP LOCKED)
    UPDATE ${sql(tables.targets)} t
    SET leased_until = now() + ${leaseMs(limits.perTarget, limits.attemptTimeout)}::double precision * interval '1 millisecond'
    FROM due WHERE t.id = due.id
    RETURNING ${sql.literal(returning.map((c) => `t.${c}`).join(", "))}`.pipe(Effect.orDie)

export const releaseLease = (sql: SqlClient.SqlClient, tables: OutboxTables, id: string) =>
  sql`UPDATE ${sql(tables.targets)} SET leased_until = now() WHERE id = ${id}`.pipe(Effect.orDie)

/** When its next attempt is due: after `delayMs`, or (given up) `otherwise`. */
export const nextAttemptAt = (sql: SqlClient.SqlClient, delayMs: number | undefined, otherwise: "NULL" | "next_attempt_at") =>
  delayMs === undefined
    ? otherwise === "NULL" ? sql`NULL::timestamptz` : sql`next_attempt_at`
    : sql`now() + ${delayMs}::double precision * interval '1 millisecond'`

/**
 * Inside the caller's transaction: records attempt number `attempt` on the item `item.where`
 * names, with its status and when the next is due (`extra` sets the outbox's own columns).
 * Guarded on the attempt count: when the lease was lost (it expired) and another dispatcher
 * recorded the attempt, this records nothing and answers false.
 */
export const recordOnItem = (
  sql: SqlClient.SqlClient,
  tables: OutboxTables,
  item: { readonly where: Statement.Fragment; readonly attempts: number },
  attempt: { readonly number: number; readonly status: string; readonly next: Statement.Fragment; readonly at: Date },
  result: AttemptResult,
  extra: Statement.Fragment
) =>
  sql`
    UPDATE ${sql(tables.items)} SET
      attempts = ${attempt.number},
      status = ${attempt.status},
      next_attempt_at = ${attempt.next},
      last_attempt_at = ${attempt.at},
      last_error = ${result.error},
      delivered_at = ${result.delivered ? sql`now()` : sql`NULL`}
      ${extra}
    WHERE ${item.where} AND attempts = ${item.attempts} AND status = 'pending'
    RETURNING 1 AS ok`.pipe(Effect.map((rows) => rows.length > 0))

/**
 * Inside the caller's transaction: turns the target failing, once (only the transition raises
 * the alert), and raises the alert, sent to the org's alert channels (but `except`) with it.
 */
export const turnFailing = (
  sql: SqlClient.SqlClient,
  tables: OutboxTables,
  target: { readonly id: string; readonly org_id: string; readonly environment: Environment },
  alert: {
    readonly type: "webhook.failing" | "channel.failing"
    readonly message: string
    readonly data: Readonly<Record<string, unknown>>
    readonly except?: string | undefined
  }
) =>
  Effect.gen(function*() {
    const turned = yield* sql`
      UPDATE ${sql(tables.targets)} SET failing = true, failing_since = now()
      WHERE id = ${target.id} AND NOT failing RETURNING id`
    if (turned.length === 0) return
    const id = makeId("alert")
    yield* sql`
      INSERT INTO alerts (id, org_id, environment, type, message, data)
      VALUES (${id}, ${target.org_id}, ${target.environment}, ${alert.type}, ${alert.message},
        ${JSON.stringify(alert.data)}::jsonb)`
    yield* enqueueAlert(sql, { id, org_id: target.org_id, environment: target.environment, ...alert })
    yield* Effect.logWarning(alert.message).pipe(
      Effect.annotateLogs({ org_id: target.org_id, [tables.targetColumn]: target.id })
    )
  })
