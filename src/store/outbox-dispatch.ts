import { Duration, Effect } from "effect"
import type { SqlClient, SqlError, Statement } from "effect/sql"
import { type AttemptOutcome, type AttemptResult, judgeAttempt } from "../domain/delivery.ts"
import type { Environment } from "../domain/environments.ts"
import { makeId } from "../domain/ids.ts"
import type { Tenant } from "./tenant-pages.ts"

/**
 * What the webhook and notification outboxes share on the dispatcher's side: a target (a webhook,
 * a channel) is leased with SKIP LOCKED, so one dispatcher across nodes has it at a time and its
 * items go out in order; released at once by a dispatcher that stops cleanly, or left to expire
 * by one that crashed; turned failing, once, with an alert, when an item is given up; and
 * re-enabled the same way for both.
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
  /** Whether items can be summaries, due when their coalescing window ends and not before. */
  readonly summaries: boolean
}

export const webhookTables: OutboxTables = { targets: "webhooks", items: "webhook_deliveries", targetColumn: "webhook_id", summaries: false }
export const channelTables: OutboxTables = { targets: "channels", items: "notifications", targetColumn: "channel_id", summaries: true }

/** A target as failing alerts name it. */
interface Target {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
}

/** What an admin alert says when a target is given up on (`webhook.failing`, `channel.failing`). */
export interface FailingAlert {
  readonly type: "webhook.failing" | "channel.failing"
  readonly message: string
  readonly data: Readonly<Record<string, unknown>>
  /** A channel not to send it to: a failing channel is not told about itself. */
  readonly except?: string | undefined
}

// A lease covers a full claim even when every attempt times out, plus a margin.
const leaseMs = (perTarget: number, attemptTimeout: Duration.Duration) => perTarget * Duration.toMillis(attemptTimeout) + 5_000

/**
 * Leases up to `limits.targets` enabled, healthy targets with due items (their `columns`), then
 * gives each its due items (`dueItems` of the leased ids: at most `perTarget` each, oldest first,
 * each naming its target in `target_id`), as `toTarget` assembles them.
 */
export const claimDue = <Row extends { readonly id: string }, ItemRow extends { readonly target_id: string }, Claimed>(
  sql: SqlClient.SqlClient,
  tables: OutboxTables,
  limits: { readonly targets: number; readonly perTarget: number; readonly attemptTimeout: Duration.Duration },
  claim: {
    readonly columns: ReadonlyArray<string>
    readonly dueItems: (targetIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ItemRow>, SqlError.SqlError>
    readonly toTarget: (row: Row, items: ReadonlyArray<ItemRow>) => Effect.Effect<Claimed>
  }
): Effect.Effect<ReadonlyArray<Claimed>> =>
  Effect.gen(function*() {
    const leased = yield* sql<Row>`
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
      RETURNING ${sql.literal(claim.columns.map((c) => `t.${c}`).join(", "))}`.pipe(Effect.orDie)
    if (leased.length === 0) return []
    const items = yield* claim.dueItems(leased.map((t) => t.id)).pipe(Effect.orDie)
    return yield* Effect.forEach(leased, (row) => claim.toTarget(row, items.filter((i) => i.target_id === row.id)))
  })

export const releaseLease = (sql: SqlClient.SqlClient, tables: OutboxTables, id: string) =>
  sql`UPDATE ${sql(tables.targets)} SET leased_until = now() WHERE id = ${id}`.pipe(Effect.orDie)

/**
 * Records attempt number `item.attempts + 1` on the item `item.where` names, with its status and
 * when the next is due (a given-up item keeps its last due time), in one transaction with what
 * the outbox keeps beside it (`alongside`, told the attempt's number and when the next is due,
 * NULL when none), and turns the target failing when it was the last. Guarded on the attempt
 * count: when the lease was lost (it expired) and another dispatcher recorded the attempt, this
 * records nothing and answers `stale`.
 */
export const recordOutboxAttempt = (
  sql: SqlClient.SqlClient,
  tables: OutboxTables,
  retryScale: number,
  attempt: {
    readonly target: Target
    readonly item: { readonly where: Statement.Fragment; readonly attempts: number }
    readonly attemptedAt: Date
    readonly result: AttemptResult
    /** The outbox's own columns to set, as `, column = value`. */
    readonly extra?: Statement.Fragment | undefined
    readonly alongside?: ((number: number, next: Statement.Fragment) => Effect.Effect<unknown, SqlError.SqlError>) | undefined
    /** The alert, should the target turn failing. */
    readonly failing: () => FailingAlert
  }
): Effect.Effect<AttemptOutcome> => {
  const { result } = attempt
  const number = attempt.item.attempts + 1
  const { delayMs, outcome, status } = judgeAttempt(number, result, retryScale)
  const next = (otherwise: Statement.Fragment) => delayMs === undefined ? otherwise : sql`now() + ${delayMs}::double precision * interval '1 millisecond'`
  return sql.withTransaction(Effect.gen(function*() {
    const recorded = yield* sql`
      UPDATE ${sql(tables.items)} SET
        attempts = ${number},
        status = ${status},
        next_attempt_at = ${next(sql`next_attempt_at`)},
        last_attempt_at = ${attempt.attemptedAt},
        last_error = ${result.error},
        delivered_at = ${result.delivered ? sql`now()` : sql`NULL`}
        ${attempt.extra ?? sql``}
      WHERE ${attempt.item.where} AND attempts = ${attempt.item.attempts} AND status = 'pending'
      RETURNING 1 AS ok`
    if (recorded.length === 0) return "stale" as const
    if (attempt.alongside !== undefined) yield* attempt.alongside(number, next(sql`NULL::timestamptz`))
    if (outcome === "gave-up") yield* turnFailing(sql, tables, attempt.target, attempt.failing())
    return outcome
  })).pipe(Effect.orDie)
}

/**
 * Inside the caller's transaction: turns the target failing, once (only the transition raises
 * the alert), and raises the alert, sent to the org's alert channels (but `except`) with it.
 */
const turnFailing = (sql: SqlClient.SqlClient, tables: OutboxTables, target: Target, alert: FailingAlert) =>
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
    yield* enqueueAlert(sql, id, target, alert)
    yield* Effect.logWarning(alert.message).pipe(
      Effect.annotateLogs({ org_id: target.org_id, [tables.targetColumn]: target.id })
    )
  })

/**
 * The alert to the org's alert channels of its environment: once per alert and channel (the id
 * is a hash of both).
 */
const enqueueAlert = (sql: SqlClient.SqlClient, alertId: string, target: Target, alert: FailingAlert) =>
  Effect.gen(function*() {
    const facts = { type: alert.type, ts: new Date().toISOString(), message: alert.message, data: alert.data }
    return yield* sql`
      INSERT INTO notifications (id, channel_id, org_id, environment, type, facts, next_attempt_at)
      SELECT 'ntf_' || left(encode(sha256(convert_to(c.id || ':' || ${alertId}, 'UTF8')), 'hex'), 32), c.id, ${target.org_id},
        ${target.environment}, ${alert.type}, ${JSON.stringify(facts)}::jsonb, now()
      FROM org_alert_channels a JOIN channels c ON c.id = a.channel_id
      WHERE a.org_id = ${target.org_id} AND c.environment = ${target.environment} AND c.enabled
        AND c.id <> ${alert.except ?? ""}
      ON CONFLICT (id) DO NOTHING`
  })

/**
 * Inside the caller's transaction: re-enables a target of the tenant (enabled, no longer failing)
 * and makes what queued for it meanwhile due at once, oldest first; a summary still waits for its
 * window's end. Answers the target's `returning` columns; none when the tenant has no such target.
 */
export const reenableTarget = <Row extends object>(
  sql: SqlClient.SqlClient,
  tables: OutboxTables,
  tenant: Tenant,
  id: string,
  returning: string
) =>
  Effect.gen(function*() {
    const rows = yield* sql<Row>`
      UPDATE ${sql(tables.targets)} SET enabled = true, failing = false, failing_since = NULL
      WHERE id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}
      RETURNING ${sql.literal(returning)}`
    if (rows.length > 0) {
      yield* sql`UPDATE ${sql(tables.items)} SET next_attempt_at = now()
        WHERE ${sql(tables.targetColumn)} = ${id} AND status = 'pending' AND next_attempt_at > now()
          ${tables.summaries ? sql`AND NOT summary` : sql``}`
    }
    return rows
  })
