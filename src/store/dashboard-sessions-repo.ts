import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash, randomBytes } from "node:crypto"
import type { Plan, RateLimitOverrides } from "../domain/plans.ts"
import type { Role } from "../domain/tenancy.ts"

/** A signed-in person's dashboard session, as a request made with its cookie finds it. */
export interface DashboardSession {
  readonly orgId: string
  readonly userId: string
  /** Sent back by the dashboard in a header on every state-changing request (CSRF). */
  readonly csrfToken: string
  readonly expiresAt: Date
}

/** What a request made with the session's cookie acts as: the person, their role and their org's plan. */
export interface SessionCaller {
  readonly session: DashboardSession
  readonly role: Role
  readonly plan: Plan
  readonly rateLimits: RateLimitOverrides
}

const hashOf = (id: string) => createHash("sha256").update(id).digest("base64url")

/**
 * Server-side dashboard sessions: the cookie carries only an opaque random id (256 bits); the
 * database keeps its hash, who it is for, its CSRF token and when it expires. Expired sessions
 * are never found, and are deleted as new ones are made.
 */
export class DashboardSessions extends Context.Service<DashboardSessions, {
  /** A new session, and the id to put in the cookie (shown only here). */
  readonly create: (
    input: { readonly orgId: string; readonly userId: string; readonly ttlSeconds: number }
  ) => Effect.Effect<{ readonly id: string; readonly session: DashboardSession }>
  /** The live session of a cookie's id; undefined when unknown, ended, expired, or its user deactivated. */
  readonly find: (id: string) => Effect.Effect<DashboardSession | undefined>
  /** The live session of a cookie's id with its person's current role and org (read on every request: a role change or sign-out is in force at once). */
  readonly caller: (id: string) => Effect.Effect<SessionCaller | undefined>
  /** Ends the session (sign-out); false when there was none. */
  readonly end: (id: string) => Effect.Effect<boolean>
}>()("signal-engine/store/DashboardSessions") {
  static readonly layer = Layer.effect(
    DashboardSessions,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const toSession = (r: { org_id: string; user_id: string; csrf_token: string; expires_at: Date }): DashboardSession => ({
        orgId: r.org_id,
        userId: r.user_id,
        csrfToken: r.csrf_token,
        expiresAt: r.expires_at
      })
      type Row = Parameters<typeof toSession>[0]

      const create = Effect.fn("DashboardSessions.create")(
        function*(input: { readonly orgId: string; readonly userId: string; readonly ttlSeconds: number }) {
          const id = randomBytes(32).toString("base64url")
          const csrf = randomBytes(32).toString("base64url")
          yield* sql`DELETE FROM dashboard_sessions WHERE expires_at < now()`
          const rows = yield* sql<Row>`
            INSERT INTO dashboard_sessions (id_hash, org_id, user_id, csrf_token, expires_at)
            VALUES (${hashOf(id)}, ${input.orgId}, ${input.userId}, ${csrf}, now() + make_interval(secs => ${input.ttlSeconds}))
            RETURNING org_id, user_id, csrf_token, expires_at`
          return { id, session: toSession(rows[0]!) }
        },
        Effect.orDie
      )

      const find = Effect.fn("DashboardSessions.find")(function*(id: string) {
        const rows = yield* sql<Row>`
          SELECT s.org_id, s.user_id, s.csrf_token, s.expires_at FROM dashboard_sessions s
          JOIN users u ON u.id = s.user_id
          WHERE s.id_hash = ${hashOf(id)} AND s.expires_at > now() AND u.deactivated_at IS NULL`
        return rows.length === 0 ? undefined : toSession(rows[0]!)
      }, Effect.orDie)

      const caller = Effect.fn("DashboardSessions.caller")(function*(id: string) {
        const rows = yield* sql<
          Row & {
            role: Role
            plan: Plan
            rate_limit_per_minute: number | null
            rate_limit_per_hour: number | null
            rate_limit_per_day: number | null
          }
        >`
          SELECT s.org_id, s.user_id, s.csrf_token, s.expires_at, u.role, o.plan,
            o.rate_limit_per_minute, o.rate_limit_per_hour, o.rate_limit_per_day
          FROM dashboard_sessions s JOIN users u ON u.id = s.user_id JOIN orgs o ON o.id = s.org_id
          WHERE s.id_hash = ${hashOf(id)} AND s.expires_at > now() AND u.deactivated_at IS NULL`
        const row = rows[0]
        if (row === undefined) return undefined
        return {
          session: toSession(row),
          role: row.role,
          plan: row.plan,
          rateLimits: { perMinute: row.rate_limit_per_minute, perHour: row.rate_limit_per_hour, perDay: row.rate_limit_per_day }
        } satisfies SessionCaller
      }, Effect.orDie)

      const end = Effect.fn("DashboardSessions.end")(function*(id: string) {
        const rows = yield* sql`DELETE FROM dashboard_sessions WHERE id_hash = ${hashOf(id)} RETURNING id_hash`
        return rows.length > 0
      }, Effect.orDie)

      return DashboardSessions.of({ create, find, caller, end })
    })
  )
}
