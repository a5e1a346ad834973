import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Goal, GoalStatus, UserGoal } from "../domain/goals.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import type { Tenant } from "./rules-repo.ts"

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
        const rows = yield* sql<Row & { readonly user_id: string }>`
          SELECT id, user_id, description, status, adapter, created_at, updated_at FROM goals
          WHERE ${sql.and([
          sql`org_id = ${tenant.orgId}`,
          sql`environment = ${tenant.environment}`,
          ...(filters.user_id !== undefined ? [sql`user_id = ${filters.user_id}`] : []),
          ...(filters.status !== undefined ? [sql`status = ${filters.status}`] : []),
          ...(after !== undefined ? [sql`id < ${after}`] : [])
        ])}
          ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map((r) => ({ ...toGoal(r), user_id: r.user_id })), page.limit, (g) => g.id)
      })
      return Goals.of({ active, list })
    })
  )
}
