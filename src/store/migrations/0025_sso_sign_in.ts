import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The sign-in flow (src/http/sso/): an org's group → role mapping beside its SSO settings, and
 * the sign-ins under way between the redirect to the identity provider and its answer. An
 * attempt keeps the PKCE verifier and the nonce server-side, under the hash of its `state`, and
 * is deleted when the answer comes, so a state (and its code) is used once.
 */
export const m0025_sso_sign_in = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE org_sso ADD COLUMN group_roles jsonb NOT NULL DEFAULT '[]'`
  yield* sql`
    CREATE TABLE sso_sign_in_attempts (
      state_hash text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      code_verifier text NOT NULL,
      nonce text NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX sso_sign_in_attempts_by_expiry ON sso_sign_in_attempts (expires_at)`
})
