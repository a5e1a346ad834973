import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The roles of people (src/domain/roles.ts): users may be team leads and viewers besides admins
 * and members, and a team membership may make its user a lead of that team (whose activity and
 * budgets a team lead then sees and manages).
 */
export const m0026_roles = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE users DROP CONSTRAINT IF EXISTS users_role_check`
  yield* sql`ALTER TABLE users ADD CONSTRAINT users_role_check CHECK (role IN ('admin','team_lead','viewer','member'))`
  yield* sql`ALTER TABLE team_members ADD COLUMN lead boolean NOT NULL DEFAULT false`
})
