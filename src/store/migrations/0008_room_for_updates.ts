import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Room for in-page updates in the tables every commit updates. A session row, an actor's state and
 * a scope's counts are rewritten by nearly every batch, never in an indexed column, so each
 * update can be a heap-only tuple (no new index entries, old versions pruned in the page) — if the
 * page has room for the new version. At the default fill factor (100) pages are filled up, and an
 * update that finds its page full writes the new version elsewhere and into each of the table's
 * indexes, whose dead entries then slow the next conflict lookup. Pages filled after this keep 30% free; existing pages get the room as they are
 * rewritten (VACUUM FULL) or as rows leave them.
 */
export const m0008_room_for_updates = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sessions SET (fillfactor = 70)`
  yield* sql`ALTER TABLE actor_state SET (fillfactor = 70)`
  yield* sql`ALTER TABLE scope_usage SET (fillfactor = 70)`
})
