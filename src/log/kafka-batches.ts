import { Effect, Exit, Option } from "effect"
import type { KafkaMessage } from "kafkajs"
import type { GroupAssignment } from "./kafka-assignment.ts"
import { decodeMessages } from "./kafka-client.ts"
import type { LocalRecords } from "./local-records.ts"
import type { LogEntry, PartitionHandler } from "./signal-log.ts"

/**
 * The Kafka consumer's per-batch step: a partition's records, fetched or appended by this node,
 * go to the handler in offset order under the partition's lock, and only while the partition is
 * consumed here. The handler commits the offsets (in PostgreSQL, with the projections); kafkajs
 * is only told how far the fetch position may move (`resolveOffset`).
 */
export interface PartitionBatches {
  /** kafkajs's `eachBatch` for one partition: decode, hand to the handler, resolve. */
  readonly fetched: (
    partition: number,
    messages: ReadonlyArray<KafkaMessage>,
    resolveOffset: (offset: string) => void
  ) => Effect.Effect<void>
  /** Records this node appended to a partition it consumes, folded without waiting for their fetch. */
  readonly appended: (partition: number) => Effect.Effect<void>
}

export const makePartitionBatches = (
  handler: PartitionHandler,
  assignment: GroupAssignment,
  local: LocalRecords,
  /** The `fetch` stage of verdicts: from a record's produce (its timestamp) to its fetch here. */
  fetchStage?: { readonly observe: (seconds: number) => void }
): PartitionBatches => {
  /** Per partition, the handler's failures in a row. */
  const failures = new Map<number, number>()

  /**
   * Hands a partition's next records to the handler (under its lock); false when the handler
   * failed, and the partition restarts from what the handler committed.
   */
  const deliver = (partition: number, entries: ReadonlyArray<LogEntry>) =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(handler.batch(partition, entries))
      if (Exit.isFailure(exit)) {
        yield* Effect.logError(`KafkaLog: partition ${partition} batch failed`, exit.cause)
        const attempt = failures.get(partition) ?? 0
        failures.set(partition, attempt + 1)
        yield* assignment.restart(partition, attempt)
        return false
      }
      failures.delete(partition)
      assignment.advance(partition, entries[entries.length - 1]!.offset + 1)
      return true
    })

  const appended = (partition: number) =>
    assignment.locked(
      partition,
      Effect.suspend(() => {
        if (!assignment.consuming(partition)) return Effect.sync(() => local.forget(partition))
        const entries = local.take(partition, assignment.next(partition))
        return entries.length === 0 ? Effect.void : Effect.asVoid(deliver(partition, entries))
      })
    )

  const fetched = (partition: number, messages: ReadonlyArray<KafkaMessage>, resolveOffset: (o: string) => void) => {
    const at = performance.now()
    const fetchedAt = Date.now()
    return assignment.locked(
      partition,
      Effect.gen(function*() {
        // Fetched for an assignment that is gone or not answered yet: the seek that follows
        // the (re)assignment fetches these again.
        if (!assignment.consuming(partition)) return
        const next = assignment.next(partition)
        const fresh = messages.filter((m) => Number(m.offset) >= next)
        const first = fresh[0]
        if (first === undefined) {
          const last = messages[messages.length - 1]
          if (last !== undefined) resolveOffset(last.offset)
          return
        }
        if (Number(first.offset) > next) {
          yield* Effect.logError(
            `KafkaLog: partition ${partition} has no records ${next}..${Number(first.offset) - 1} ` +
              "(deleted by retention?); continuing after them"
          )
        }
        // Only what this fetch hands over (not this node's own appends, folded before their fetch).
        if (fetchStage !== undefined) { for (const m of fresh) fetchStage.observe(Math.max(0, fetchedAt - Number(m.timestamp)) / 1000) }
        const { entries, failure } = yield* decodeMessages(partition, fresh, at)
        if (entries.length > 0) {
          if (!(yield* deliver(partition, entries))) return
          resolveOffset(String(entries[entries.length - 1]!.offset))
        }
        if (Option.isSome(failure)) yield* assignment.stop(partition, failure.value.message)
      })
    )
  }

  return { fetched, appended }
}
