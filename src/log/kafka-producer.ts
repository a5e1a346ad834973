import { Clock, Duration, Effect } from "effect"
import { Partitioners, type Producer, type RecordMetadata } from "kafkajs"
import type { LogRecord } from "../domain/records.ts"
import { batchedAppend } from "./batched-append.ts"
import type { BrokerWatch } from "./broker-watch.ts"
import { type KafkaClient, unavailable } from "./kafka-client.ts"
import type { LocalRecords } from "./local-records.ts"
import { serializeRecord } from "./log-records.ts"
import { partitionForKey } from "./murmur2.ts"
import { range } from "./partitions.ts"
import { type AppendResult, LogUnavailable } from "./signal-log.ts"

/** What a caller is told when the cluster is known to be down: nothing was handed to the producer. */
const refused = (watch: BrokerWatch) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.fail(
      new LogUnavailable({
        message: `KafkaLog: the cluster has not answered for ${((now - (watch.downSince() ?? now)) / 1000).toFixed(1)} s; the records were not sent`,
        notWritten: true
      })
    ))

/** What a caller waiting for an append is told when the cluster goes down meanwhile. */
const cutOff = new LogUnavailable({ message: "KafkaLog: the cluster went down while the records were being sent; they may still be written" })

/**
 * KafkaLog's `append`: records keyed by user id, placed explicitly by our murmur2 partitioner, produced
 * idempotently with acks=all, and handed to this node's own consumer through `local`. While the
 * cluster is down (`watch`) appends are refused at once, certain not to be written, rather than
 * held until kafkajs gives up; callers already waiting are released when it goes down, their
 * records still in flight (the client retries under the same idempotency keys).
 */
export const makeKafkaAppend = (client: KafkaClient, local: LocalRecords, watch: BrokerWatch) =>
  Effect.gen(function*() {
    const { partitions, producers } = client.settings
    const lanes = Math.min(producers, partitions)
    // Each partition always goes through the same lane (partition mod lanes), whose producer has
    // one send in flight: per partition, order and exactly-once hold as with one producer, and
    // the lanes' sends, to different partitions, run side by side.
    const appends = yield* Effect.forEach(range(lanes), () => makeLane(client, local, watch))
    const laneOf = (record: LogRecord) => partitionForKey(record.user_id, partitions) % lanes
    const appendToLanes = (records: ReadonlyArray<LogRecord>): Effect.Effect<ReadonlyArray<AppendResult>, LogUnavailable> => {
      const first = laneOf(records[0]!)
      const byLane = new Map<number, Array<number>>()
      records.forEach((r, i) => {
        const lane = laneOf(r)
        const indices = byLane.get(lane)
        if (indices === undefined) byLane.set(lane, [i])
        else indices.push(i)
      })
      if (byLane.size === 1) return appends[first]!(records)
      // Several lanes: every part must land for the append to succeed; a part refused while
      // another may have landed leaves the whole outcome unknown (the client sends all again
      // under the same idempotency keys, and what landed is answered as a duplicate).
      return Effect.all([...byLane].map(([lane, indices]) => Effect.result(appends[lane]!(indices.map((i) => records[i]!)))), { concurrency: "unbounded" })
        .pipe(
          Effect.flatMap((parts) => {
            const failed = parts.flatMap((part) => (part._tag === "Failure" ? [part.failure] : []))
            if (failed.length > 0) {
              const certain = failed.length === parts.length && failed.every((e) => e.notWritten === true)
              return Effect.fail(certain ? failed[0]! : new LogUnavailable({ message: failed[0]!.message }))
            }
            const results = new Array<AppendResult>(records.length)
            ;[...byLane.values()].forEach((indices, k) => {
              const part = parts[k]!
              if (part._tag === "Success") indices.forEach((i, j) => void (results[i] = part.success[j]!))
            })
            return Effect.succeed(results as ReadonlyArray<AppendResult>)
          })
        )
    }
    return (records: ReadonlyArray<LogRecord>) =>
      records.length === 0
        ? Effect.succeed([])
        : watch.isDown()
        ? refused(watch)
        : Effect.raceFirst(appendToLanes(records), Effect.andThen(watch.down, Effect.fail(cutOff)))
  })

/** One producer and its batcher: the partitions of one lane, one send in flight. */
const makeLane = ({ kafka, settings }: KafkaClient, local: LocalRecords, watch: BrokerWatch) =>
  Effect.gen(function*() {
    const { topic, partitions } = settings
    // One send in flight (the batcher's) and maxInFlightRequests 1: kafkajs's idempotent
    // producer keeps per-partition sequence numbers and only that keeps them in order.
    const newProducer = () =>
      kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        // Only consulted for records without a partition, which we never send; naming it
        // silences kafkajs's warning about its v2 default.
        createPartitioner: Partitioners.DefaultPartitioner
      })
    const connect = (p: Producer) => Effect.tryPromise({ try: () => p.connect(), catch: unavailable("connecting the producer") })
    let producer = newProducer()
    yield* Effect.acquireRelease(connect(producer), () => Effect.promise(() => producer.disconnect().catch(() => undefined)))
    // After a failed send the producer's sequence numbers cannot be trusted: kafkajs takes a
    // batch's numbers back when its request fails, also when the broker wrote it (a response lost
    // to a cut connection), and then gives the next records those numbers again. The broker takes
    // that batch for a retry: of the same length it answers the old offsets and writes nothing;
    // of another length it refuses every send (OUT_OF_ORDER_SEQUENCE_NUMBER) for good. A new
    // producer (a new producer id) starts its numbers afresh; what was in flight is the callers'
    // to send again under their idempotency keys, as with any unknown outcome.
    let suspect = false
    const fresh = Effect.gen(function*() {
      const old = producer
      yield* Effect.promise(() => old.disconnect().catch(() => undefined))
      const next = newProducer()
      yield* connect(next).pipe(Effect.mapError((e) => new LogUnavailable({ message: e.message, notWritten: true })))
      producer = next
      suspect = false
    })

    const write = (records: ReadonlyArray<LogRecord>) =>
      Effect.gen(function*() {
        // Queued behind a send that the outage held: its callers were answered; send nothing.
        if (watch.isDown()) return yield* refused(watch)
        if (suspect) yield* fresh
        const placed = records.map((r) => partitionForKey(r.user_id, partitions))
        const values = records.map(serializeRecord)
        const sent: ReadonlyArray<RecordMetadata> = yield* Effect.tryPromise({
          try: () =>
            producer.sendBatch({
              acks: -1,
              topicMessages: [{
                topic,
                messages: records.map((r, i) => ({
                  key: r.user_id,
                  value: values[i]!,
                  partition: placed[i]!
                }))
              }]
            }),
          catch: (e) => {
            suspect = true
            return unavailable("append")(e)
          }
        })
        // kafkajs sends each partition's records, in input order, as one record batch; the broker
        // answers its base offset, so the i-th record of a partition is at base + i. An idempotent
        // retry that the broker deduplicates answers the original batch's base offset.
        const base = new Map<number, number>()
        for (const m of sent) {
          if (m.errorCode !== 0 || m.baseOffset === undefined) {
            // The broker answered this partition's records with an error: not written.
            suspect = true
            return yield* new LogUnavailable({ message: `KafkaLog: append to partition ${m.partition} failed (${m.errorCode})`, notWritten: true })
          }
          base.set(m.partition, Number(m.baseOffset))
        }
        const seen = new Map<number, number>()
        const results: Array<AppendResult> = []
        for (const partition of placed) {
          const index = seen.get(partition) ?? 0
          seen.set(partition, index + 1)
          const first = base.get(partition)
          if (first === undefined) {
            return yield* Effect.die(new Error(`KafkaLog: no produce response for partition ${partition}`))
          }
          results.push({ partition, offset: first + index })
        }
        local.appended(records, values, results)
        return results
      })

    // No linger: one produce is in flight at a time, and the appends that arrive meanwhile go in
    // the next one, so under load batches form anyway; a window would only add its length.
    return yield* batchedAppend("KafkaLog", Duration.zero, write)
  })
