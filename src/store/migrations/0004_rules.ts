import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const m0004_rules = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rules (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      name text NOT NULL,
      type text NOT NULL CHECK (type IN ('budget','model_filter','user_limit','org_policy')),
      enabled boolean NOT NULL DEFAULT true,
      scope text NOT NULL CHECK (scope IN ('user','team','org','project')),
      scope_id text NOT NULL,
      priority integer NOT NULL,
      condition jsonb NOT NULL,
      action text NOT NULL CHECK (action IN ('block','warn','log','notify')),
      action_config jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX rules_by_org ON rules (org_id, environment, id DESC)`
  yield* sql`CREATE INDEX rules_for_evaluation ON rules (org_id, environment, priority, created_at) WHERE enabled`
})
