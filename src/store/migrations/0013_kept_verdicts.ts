import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Verdicts are not in the log, so a replay keeps the stored ones of the events it rewrites
 * (`kept_verdicts`, filled in the transaction that forgets the events, emptied once each
 * partition is rebuilt). Found by a scan of the events being forgotten: no index for it, so live
 * writes pay nothing for what only a replay reads (and a replay rewrites every such row anyway).
 */
export const m0013_kept_verdicts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE kept_verdicts (
    event_id text PRIMARY KEY,
    log_partition integer NOT NULL,
    verdict jsonb NOT NULL
  )`
})
