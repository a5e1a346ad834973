import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"

/**
 * Every query of a tenant's resources is confined to one org and one environment: the caller's;
 * the activity of a signed-in person who may not see all of it (src/domain/roles.ts), further
 * to the users they may see.
 */
export interface Tenant {
  readonly orgId: string
  readonly environment: Environment
  readonly seenBy?: SeenBy | undefined
}

/** A person who sees only some users' activity: their own, or that of the teams they lead. */
export interface SeenBy {
  readonly userId: string
  readonly visibility: "led_teams" | "own"
}

/**
 * The condition (none for whole-org callers, one otherwise; for `sql.and`) confining a query of activity to the users the tenant's person may see (nothing
 * for whole-org callers). A team lead's teams are read as they are now, so a lead who is given or
 * loses a team sees its activity, past included, from then on.
 */
export const visibleUsers = (sql: SqlClient.SqlClient, tenant: Tenant, column: string) => {
  const seenBy = tenant.seenBy
  if (seenBy === undefined) return []
  if (seenBy.visibility === "own") return [sql`${sql.literal(column)} = ${seenBy.userId}`]
  return [sql`${sql.literal(column)} IN (
    SELECT m.user_id FROM team_members m JOIN team_members l ON l.team_id = m.team_id
    WHERE l.user_id = ${seenBy.userId} AND l.lead)`]
}

export interface PageRequest {
  readonly limit: number
  readonly cursor: string | undefined
}

/** A page of the tenant's rows of `table` (`columns` of each), newest id first, after the cursor's. */
export const tenantPage = <Row extends object, A extends { readonly id: string }>(
  sql: SqlClient.SqlClient,
  from: { readonly table: string; readonly columns: string },
  tenant: Tenant,
  page: PageRequest,
  to: (row: Row) => A
): Effect.Effect<Page<A>> => {
  const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
  return sql<Row>`
    SELECT ${sql.literal(from.columns)} FROM ${sql(from.table)}
    WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
      ${after === undefined ? sql`` : sql`AND id < ${after}`}
    ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(
    Effect.orDie,
    Effect.map((rows) => toPage(rows.map(to), page.limit, (a) => a.id))
  )
}
