import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Rules carry a version: every statement that changes the rules table bumps `rules_version` and
 * notifies `signal_engine_rules` with the new number, in its own transaction (delivered when, and
 * only if, it commits). A node that hears a number above its own reloads the rules; a signal
 * record carries the version its accepting node held, so the node that judges it (maybe another)
 * reloads first when it holds an older one.
 */
export const m0016_rules_version = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE rules_version (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    version bigint NOT NULL
  )`
  yield* sql`INSERT INTO rules_version (version) VALUES (1)`
  yield* sql`CREATE FUNCTION signal_engine_rules_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE v bigint;
    BEGIN
      UPDATE rules_version SET version = version + 1 RETURNING version INTO v;
      PERFORM pg_notify('signal_engine_rules', v::text);
      RETURN NULL;
    END
    $$`
  yield* sql`CREATE TRIGGER rules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_rules_changed()`
})
