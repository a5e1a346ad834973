import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A batch write is one round trip: its statement and its events' `COPY` in one query string,
 * which PostgreSQL runs as one transaction. The statement calls this when a partition's offset
 * fence did not hold, so that nothing of the write stays (the `COPY` comes after it); the
 * writer then asks again, statement by statement, to learn which partitions were fenced.
 */
export const m0014_fence_lost = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION signal_engine_fence_lost(held bigint, wanted integer) RETURNS integer
    LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the offset fence held for % of % partitions', held, wanted USING ERRCODE = 'SEF01';
    END
    $$`
})
