import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The events table loses its unique index on `signal_id`. An event's id is `evt_` plus the suffix
 * of its signal's id (eventIdFor), so the primary key already makes signal ids unique, and no
 * query looks an event up by signal id; the second unique index only cost every insert (and a
 * replay, which keeps the unique indexes) a b-tree insert and ~59 bytes per row (measured).
 */
export const m0007_events_without_signal_id_index = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_signal_id_key`
})
