import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Fleet credentials: an org's ingest credential that managed settings carry for every machine,
 * each record naming its user (src/http/engine/fleet-identity.ts). The org decides whether an
 * identity that is no user of it is created or refused; refused ones are counted per identity.
 * A user's insert now notifies `signal_engine_principals` too (migration 0015): a fleet's lookup
 * of an e-mail that was no user is kept, and must be dropped once that user exists.
 */
export const m0024_fleet_credentials = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE fleet_credentials (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs (id),
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      name text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      key_hint text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX fleet_credentials_org ON fleet_credentials (org_id, environment, id)`
  yield* sql`ALTER TABLE orgs ADD COLUMN unknown_identities text NOT NULL DEFAULT 'refuse'
    CHECK (unknown_identities IN ('create', 'refuse'))`
  yield* sql`
    CREATE TABLE fleet_unknown_identities (
      org_id text NOT NULL REFERENCES orgs (id),
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      identity text NOT NULL,
      first_seen timestamptz NOT NULL DEFAULT now(),
      last_seen timestamptz NOT NULL DEFAULT now(),
      count bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (org_id, environment, identity)
    )`
  yield* sql`CREATE TRIGGER principals_changed AFTER UPDATE OR DELETE OR TRUNCATE ON fleet_credentials
    FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_principals_changed()`
  yield* sql`CREATE TRIGGER principals_inserted AFTER INSERT ON users
    FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_principals_changed()`
})
