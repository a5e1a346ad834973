import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * What the rules decided about a signal sent with an idempotency key, kept with its event: a
 * retry of it is answered the same (the verdict is not in the log, it depends on the rules then).
 */
export const m0011_event_verdicts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN verdict jsonb`
})
