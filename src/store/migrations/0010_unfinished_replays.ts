import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Partitions a replay began to rebuild and has not finished (src/store/unfinished-replays.ts). */
export const m0010_unfinished_replays = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE unfinished_replays (
    partition integer PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now()
  )`
})
