import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Per-org single sign-on settings (src/store/sso-repo.ts), one row per org. `id` repeats the org
 * id so that the audit log's snapshots read the row like any other resource's.
 */
export const m0024_sso = Effect.gen(function*() {
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
})
