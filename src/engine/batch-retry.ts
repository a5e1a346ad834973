import { Effect } from "effect"
import type { PartitionWorkerOptions } from "./partition-worker-options.ts"

/**
 * A batch whose reads or writes failed (actors, first copies) is tried again until it folds: with
 * a backoff (100 ms doubling, at most 10 s) while the database answers, and as soon as it answers
 * again while it is down, so a node back from an outage folds what waited at once.
 */
export const retryBatch = (database: PartitionWorkerOptions["database"]) => <A, E>(attempt: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.gen(function*() {
    let delay = 100
    for (;;) {
      const result = yield* Effect.result(attempt)
      if (result._tag === "Success") return result.success
      if (database?.isDown() === true) {
        yield* database.up
        delay = 100
        continue
      }
      yield* Effect.sleep(delay)
      delay = Math.min(delay * 2, 10_000)
    }
  })
