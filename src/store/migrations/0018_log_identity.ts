import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The one log the projections are fed from, recorded on the first start (src/store/log-identity-repo.ts). */
export const m0018_log_identity = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE log_identity (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      kind text NOT NULL CHECK (kind IN ('pg', 'kafka')),
      topic text,
      cluster_id text,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((kind = 'kafka') = (topic IS NOT NULL AND cluster_id IS NOT NULL))
    )`
})
