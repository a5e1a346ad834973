import { Deferred, Effect, Exit, FiberSet, Option } from "effect"
import { randomUUID } from "node:crypto"
import { decodeMessages, type KafkaClient, scopedConsumer, unavailable } from "./kafka-client.ts"
import { topicOffsets } from "./kafka-topic.ts"
import { range } from "./partitions.ts"
import type { LogUnavailable, SignalLogService } from "./signal-log.ts"

/**
 * KafkaLog's reads outside the consumer group (replay, tests): the bounds of each partition, and
 * `readPartition`, one partition from an offset to the end it had when the read began, by a
 * consumer of its own.
 */
export const makeKafkaReader = (client: KafkaClient) => {
  const { admin, settings } = client
  const { topic, partitions } = settings
  const offsets = topicOffsets(client)

  const startOffsets = offsets.pipe(
    Effect.map((offsets) => {
      const starts = range(partitions).map(() => 0)
      for (const o of offsets) if (o.partition < partitions) starts[o.partition] = Number(o.low)
      return starts
    })
  )

  const endOffsets = offsets.pipe(
    Effect.map((offsets) => {
      const ends = range(partitions).map(() => 0)
      for (const o of offsets) if (o.partition < partitions) ends[o.partition] = Number(o.high)
      return ends
    })
  )

  const readPartition: SignalLogService["readPartition"] = (partition, fromOffset, onBatch) =>
    Effect.gen(function*() {
      const end = Number((yield* offsets).find((o) => o.partition === partition)?.high ?? 0)
      const start = Math.max(0, fromOffset)
      if (start >= end) return
      yield* Effect.scoped(Effect.gen(function*() {
        const runPromise = yield* FiberSet.makeRuntimePromise<never>()
        const done = yield* Deferred.make<void, LogUnavailable>()
        // kafkajs cannot assign partitions without a group: use a throwaway one, removed after.
        const groupId = `${settings.groupId}-read-${randomUUID()}`
        const consumer = yield* scopedConsumer(
          client,
          groupId,
          Effect.promise(() => admin.deleteGroups([groupId]).catch(() => undefined))
        )
        yield* Effect.tryPromise({
          try: () => consumer.subscribe({ topics: [topic], fromBeginning: true }),
          catch: unavailable("subscribing")
        })
        let next = start
        // Emitted before the first fetch of a generation: pause the other partitions and seek.
        consumer.on(consumer.events.GROUP_JOIN, (event) => {
          const mine = event.payload.memberAssignment[topic] ?? []
          const others = mine.filter((p) => p !== partition)
          if (others.length > 0) consumer.pause([{ topic, partitions: others }])
          if (mine.includes(partition)) consumer.seek({ topic, partition, offset: String(next) })
        })
        consumer.on(consumer.events.CRASH, (event) => {
          void runPromise(Deferred.fail(done, unavailable("reading")(event.payload.error))).catch(() => undefined)
        })
        yield* Effect.tryPromise({
          try: () =>
            consumer.run({
              autoCommit: false,
              eachBatchAutoResolve: false,
              eachBatch: ({ batch, resolveOffset }) =>
                runPromise(
                  Effect.gen(function*() {
                    if (batch.partition !== partition || (yield* Deferred.isDone(done))) return
                    const wanted = batch.messages.filter((m) => Number(m.offset) >= next && Number(m.offset) < end)
                    const { entries, failure } = yield* decodeMessages(partition, wanted)
                    if (entries.length > 0) {
                      const exit = yield* Effect.exit(onBatch(entries))
                      if (Exit.isFailure(exit)) return yield* Deferred.failCause(done, exit.cause)
                      next = entries[entries.length - 1]!.offset + 1
                    }
                    if (Option.isSome(failure)) return yield* Deferred.die(done, failure.value)
                    if (batch.messages.length > 0) resolveOffset(batch.lastOffset())
                    if (next >= end) yield* Deferred.succeed(done, undefined)
                  }).pipe(Effect.asVoid)
                )
            }),
          catch: unavailable("reading")
        })
        yield* Deferred.await(done)
      }))
    })

  return { readPartition, startOffsets, endOffsets }
}
