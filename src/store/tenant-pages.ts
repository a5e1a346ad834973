import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"

/** Every query of a tenant's resources is confined to one org and one environment: the caller's. */
export interface Tenant {
  readonly orgId: string
  readonly environment: Environment
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
