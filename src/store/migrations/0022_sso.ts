import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Per-org single sign-on settings (src/store/sso-repo.ts), one row per org. `id` repeats the org
 * id so that the audit log's snapshots read the row like any other resource's. And the dashboard's
 * server-side sessions (src/store/dashboard-sessions-repo.ts): only a hash of the cookie's id is
 * kept, so a database dump does not hand out sessions.
 */
export const m0022_sso = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE org_sso (
      org_id text PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
      id text GENERATED ALWAYS AS (org_id) STORED,
      issuer text NOT NULL,
      client_id text NOT NULL,
      client_secret_ciphertext text NOT NULL,
      allowed_email_domains text[] NOT NULL,
      groups_claim text,
      create_users boolean NOT NULL DEFAULT false,
      allow_api_key_sign_in boolean NOT NULL DEFAULT false,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE dashboard_sessions (
      id_hash text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at)`
})
