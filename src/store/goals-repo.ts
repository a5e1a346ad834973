import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Goal, GoalStatus, UserGoal } from "../domain/goals.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import type { Tenant } from "./rules-repo.ts"
import { visibleUsers } from "./tenant-pages.ts"

interface Row extends Omit<Goal, "created_at" | "updated_at" | "adapter"> {
  readonly adapter: string | null
  readonly created_at: Date
  readonly updated_at: Date | null
}

const toGoal = (r: Row): Goal => ({
  id: r.id,
  description: r.description,
  status: r.status,
  adapter: r.adapter,
  created_at: new Date(r.created_at).toISOString(),
  ...(r.updated_at ? { updated_at: new Date(r.updated_at).toISOString() } : {})
})

export interface GoalFilters {
  readonly user_id?: string | undefined
  readonly status?: GoalStatus | undefined
}

/** The read side of goals: the projection the partition workers write from goal records. */
export class Goals extends Context.Service<Goals, {
  /** The user's active goals, oldest first, at most `limit`. */
  readonly active: (tenant: Tenant, userId: string, limit: number) => Effect.Effect<ReadonlyArray<Goal>>
  /** Every user's goals, newest first (ids are time-ordered), a page at a time. */
  readonly list: (
    tenant: Tenant,
    filters: GoalFilters,
    page: { readonly limit: number; readonly cursor?: string | undefined }
  ) => Effect.Effect<Page<UserGoal>>
}>()("signal-engine/store/Goals") {
  static readonly layer = Layer.effect(
    Goals,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const active = Effect.fn("Goals.active")(function*(tenant: Tenant, userId: string, limit: number) {
        const rows = yield* sql<Row>`
          SELECT id, description, status, adapter, created_at, updated_at FROM goals
          WHERE user_id = ${userId} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}
            AND status = 'active'
          ORDER BY created_at, id LIMIT ${limit}`.pipe(Effect.orDie)
        return rows.map(toGoal)
      })
      const list = Effect.fn("Goals.list")(function*(
        tenant: Tenant,
        filters: GoalFilters,
        page: { readonly limit: number; readonly cursor?: string | undefined }
      ) {
        const after = page.cursor === undefined || page.cursor === "" ? undefined : decodeCursor(page.cursor)
        // A goal's drift: the goal-drift events the engine appended for it (their metadata names
        // the goal), found through the user's events since the goal was set (events_by_user).
        const rows = yield* sql<Row & { readonly user_id: string; readonly drift_count: number; readonly last_drift_at: Date | null }>`
          SELECT g.id, g.user_id, g.description, g.status, g.adapter, g.created_at, g.updated_at, d.drift_count, d.last_drift_at
          FROM goals g
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS drift_count, max(e.ts) AS last_drift_at FROM events e
            WHERE e.org_id = g.org_id AND e.environment = g.environment AND e.user_id = g.user_id
              AND e.ts >= g.created_at AND e.type = 'goal-drift' AND e.metadata->>'goal_id' = g.id
          ) d
          WHERE ${
          sql.and([
            sql`g.org_id = ${tenant.orgId}`,
            sql`g.environment = ${tenant.environment}`,
            ...visibleUsers(sql, tenant, "g.user_id"),
            ...(filters.user_id !== undefined ? [sql`g.user_id = ${filters.user_id}`] : []),
            ...(filters.status !== undefined ? [sql`g.status = ${filters.status}`] : []),
            ...(after !== undefined ? [sql`g.id < ${after}`] : [])
          ])
        }
          ORDER BY g.id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        return toPage(
          rows.map((r) => ({
            ...toGoal(r),
            user_id: r.user_id,
            drift_count: Number(r.drift_count),
            last_drift_at: r.last_drift_at === null ? null : new Date(r.last_drift_at).toISOString()
          })),
          page.limit,
          (g) => g.id
        )
      })
      return Goals.of({ active, list })
    })
  )
}
