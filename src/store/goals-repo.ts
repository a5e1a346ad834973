import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Goal } from "../domain/goals.ts"
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

/** The read side of goals: the projection the partition workers write from goal records. */
export class Goals extends Context.Service<Goals, {
  /** The user's active goals, oldest first, at most `limit`. */
  readonly active: (tenant: Tenant, userId: string, limit: number) => Effect.Effect<ReadonlyArray<Goal>>
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
      return Goals.of({ active })
    })
  )
}
