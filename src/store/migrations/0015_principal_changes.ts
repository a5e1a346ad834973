import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Nodes cache what a key resolves to (src/http/auth.ts) and drop the cache when a row it is made
 * of changes: every statement that changes one notifies `signal_engine_principals`, delivered to
 * the listening nodes when (and only if) its transaction commits, so no node keeps a revoked key
 * or an old setting longer than the notification takes. A trigger catches every writer (the
 * management API and an operator's SQL alike). Inserts of orgs, users and keys change no
 * principal anyone holds (a new key was never presented before it existed), so only a team
 * membership's insert notifies.
 */
export const m0015_principal_changes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION signal_engine_principals_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('signal_engine_principals', TG_TABLE_NAME);
      RETURN NULL;
    END
    $$`
  for (const table of ["orgs", "users", "license_keys", "api_keys"]) {
    yield* sql.unsafe(`CREATE TRIGGER principals_changed AFTER UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_principals_changed()`)
  }
  yield* sql`CREATE TRIGGER principals_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON team_members
    FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_principals_changed()`
})
