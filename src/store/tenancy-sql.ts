import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { decodeCursor } from "../domain/pagination.ts"
import { NameTaken } from "../domain/tenancy.ts"

/** What the tenancy repositories share: timestamps, pages, and the checks of ids and names. */

export type { PageRequest } from "./tenant-pages.ts"

export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())
export const isoNN = (d: Date | string): string => new Date(d).toISOString()

/** A unique violation as NameTaken for `what`; any other SQL failure is a defect. */
export const takenIfUnique = (what: string) => (e: SqlError) => e.reason._tag === "UniqueViolation" ? Effect.fail(new NameTaken(what)) : Effect.die(e)

export const uniqueAsTaken = (what: string) => <A, R>(self: Effect.Effect<A, SqlError, R>) => Effect.catchTag(self, "SqlError", takenIfUnique(what))

/** The keyset condition of a page of a table keyed by `id`, newest first. */
export const pageAfter = (sql: SqlClient.SqlClient, cursor: string | undefined) => {
  const after = cursor === undefined ? undefined : decodeCursor(cursor)
  return after === undefined ? sql`` : sql`AND id < ${after}`
}

/** The ids among `ids` that are not of the given org's table rows. */
export const missingIds = (sql: SqlClient.SqlClient, table: "users" | "teams", orgId: string, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed([] as ReadonlyArray<string>)
    : sql<{ readonly id: string }>`SELECT id FROM ${sql(table)} WHERE org_id = ${orgId} AND id IN ${sql.in(ids)}`.pipe(
      Effect.map((rows) => ids.filter((id) => !rows.some((r) => r.id === id))),
      Effect.orDie
    )

/** The ids among `userIds` of deactivated users (they can be in no team and get no key). */
export const deactivatedIds = (sql: SqlClient.SqlClient, orgId: string, userIds: ReadonlyArray<string>) =>
  userIds.length === 0
    ? Effect.succeed([] as ReadonlyArray<string>)
    : sql<{ readonly id: string }>`SELECT id FROM users
        WHERE org_id = ${orgId} AND id IN ${sql.in(userIds)} AND deactivated_at IS NOT NULL ORDER BY id`.pipe(
      Effect.map((rows) => rows.map((r) => r.id)),
      Effect.orDie
    )
