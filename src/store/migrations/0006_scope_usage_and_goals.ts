import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Usage per budget scope (team, org, project) and calendar window, one row per log partition:
 * each partition worker owns its rows and writes their absolute values in its batch transaction,
 * so the total of a scope is the sum over partitions and a replay rewrites exactly its own rows.
 * Goals are the projection of the goal records of the log.
 */
export const m0006_scope_usage_and_goals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE scope_usage (
      org_id text NOT NULL,
      environment text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('team','org','project')),
      scope_id text NOT NULL,
      window_key text NOT NULL,
      partition integer NOT NULL,
      cost_usd double precision NOT NULL,
      tokens_in bigint NOT NULL,
      tokens_out bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (org_id, environment, scope, scope_id, window_key, partition)
    )`
  yield* sql`CREATE INDEX scope_usage_by_partition ON scope_usage (partition)`
  yield* sql`
    CREATE TABLE goals (
      id text PRIMARY KEY,
      org_id text NOT NULL,
      environment text NOT NULL,
      user_id text NOT NULL,
      description text NOT NULL,
      status text NOT NULL CHECK (status IN ('active','completed','abandoned')),
      adapter text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz,
      log_partition integer NOT NULL
    )`
  yield* sql`CREATE INDEX goals_by_user ON goals (user_id, environment, created_at)`
  yield* sql`CREATE INDEX goals_by_partition ON goals (log_partition)`
})
