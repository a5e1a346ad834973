import type { PgClient } from "@effect/sql-pg"
import { Effect, Queue } from "effect"
import { range } from "./partitions.ts"
import { CHANNEL } from "./pg-log-table.ts"

/**
 * What the NOTIFYs of appends tell PgLog's partition consumers: when to look at the log, and how
 * far it goes. Filled by `listenForAppends`, read by each partition's loop.
 */
export interface Announcements {
  /** Per partition, a wake-up for its consumer (at most one pending). */
  readonly wakes: ReadonlyArray<Queue.Queue<void>>
  /** Per partition, the highest next offset a NOTIFY announced (infinite: unknown). */
  readonly heads: Array<number>
}

export const makeAnnouncements = (partitions: number): Effect.Effect<Announcements> =>
  Effect.map(
    Effect.forEach(range(partitions), () => Queue.sliding<void>(1)),
    (wakes) => ({ wakes, heads: range(partitions).map(() => Number.POSITIVE_INFINITY) })
  )

/** Forwards NOTIFYs to the partitions' wake-ups and heads, reconnecting the listener as needed. */
export const listenForAppends = (sql: PgClient.PgClient, { wakes, heads }: Announcements) =>
  Effect.scoped(Effect.gen(function*() {
    const notifications = yield* sql.listen(CHANNEL)
    // Whatever was appended while no listener was up would otherwise wait for the poll.
    heads.fill(Number.POSITIVE_INFINITY)
    for (const wake of wakes) yield* Queue.offer(wake, undefined)
    for (;;) {
      const notification = yield* Queue.take(notifications)
      // `<partition>:<head>`; a payload of partitions alone (an older node's) means "look".
      for (const announced of notification.payload.split(",")) {
        const [p, head] = announced.split(":")
        const partition = Number(p)
        const wake = wakes[partition]
        if (wake === undefined) continue
        heads[partition] = Math.max(heads[partition]!, head === undefined ? Number.POSITIVE_INFINITY : Number(head))
        yield* Queue.offer(wake, undefined)
      }
    }
  })).pipe(
    Effect.catchCause((cause) =>
      Effect.logWarning("PgLog: LISTEN connection lost; polling until it is back", cause).pipe(
        Effect.andThen(Effect.sleep("1 second"))
      )
    ),
    Effect.forever
  )
