import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Users can be deactivated (offboarded): their keys revoked, their activity kept. */
export const m0012_user_deactivation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE users ADD COLUMN deactivated_at timestamptz`
})
