import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A replay empties a partition's projections and writes them again; its users' states are saved
 * as it goes and at the end. Killed half-way, it leaves those partitions incomplete (no events
 * after the point it reached, states of an earlier point), and a node consuming from there would
 * carry on from the wrong state: sessions split, counters short. So a replay notes each partition
 * it is about to rebuild (`unfinished_replays`) and clears the note once the partition is
 * written, and a node refuses to serve while a note is left: running the replay again mends it.
 */
export class ReplayUnfinished extends Schema.TaggedError<ReplayUnfinished>()("ReplayUnfinished", {
  message: Schema.String
}) {}

/** Notes that a replay is about to rebuild these partitions (kept from an earlier unfinished one). */
export const noteReplayStarted = (partitions: ReadonlyArray<number>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO unfinished_replays (partition)
      SELECT p::int4 FROM json_array_elements_text(${JSON.stringify(partitions)}::json) AS t(p)
      ON CONFLICT (partition) DO NOTHING`).pipe(Effect.asVoid, Effect.orDie)

/** The partition is rebuilt and its states saved. */
export const noteReplayFinished = (partition: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM unfinished_replays WHERE partition = ${partition}`).pipe(
    Effect.asVoid,
    Effect.orDie
  )

/** Serving refuses to start after a replay that did not finish (checked before anything is consumed). */
export const RefuseAfterUnfinishedReplay: Layer.Layer<never, ReplayUnfinished, SqlClient.SqlClient> = Layer.effectDiscard(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ readonly partition: number; readonly started_at: Date }>`
      SELECT partition, started_at FROM unfinished_replays ORDER BY partition`.pipe(Effect.orDie)
    if (rows.length === 0) return
    const partitions = rows.map((r) => r.partition).join(", ")
    return yield* new ReplayUnfinished({
      message: `a replay of partition(s) ${partitions} (started ${rows[0]!.started_at.toISOString()}) did not finish, ` +
        "so their sessions, events and user states are incomplete; run `signal-engine replay` again " +
        `(all partitions, or \`--partition N\` for each of ${partitions}) before serving`
    })
  })
)
