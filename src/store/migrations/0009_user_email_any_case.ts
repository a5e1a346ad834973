import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An e-mail address names one user of an org whatever its letter case (`A@x.com` is `a@x.com`).
 * An org that already has two users differing only in case keeps them (the index is not built
 * there, and creating a user still checks case-insensitively); everywhere else the database
 * enforces it.
 */
export const m0009_user_email_any_case = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM users GROUP BY org_id, lower(email) HAVING count(*) > 1) THEN
      CREATE UNIQUE INDEX users_org_email_any_case ON users (org_id, lower(email));
    END IF;
  END $$`)
})
