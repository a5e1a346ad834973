import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const m0003_partition_owners = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Which node owns each partition now, and where to reach it: a node that receives a signal
  // for a partition it does not own forwards it there (the engine's proxy path).
  yield* sql`
    CREATE TABLE partition_owners (
      log text NOT NULL,
      partition integer NOT NULL,
      node_id text NOT NULL,
      url text NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (log, partition)
    )`
})
