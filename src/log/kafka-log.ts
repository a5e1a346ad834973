import { Effect, Layer } from "effect"
import { clusterIdOf, connectKafka } from "./kafka-client.ts"
import { makeKafkaConsumer } from "./kafka-consumer.ts"
import { makeKafkaAppend } from "./kafka-producer.ts"
import { makeKafkaReader } from "./kafka-reader.ts"
import { ensureTopic } from "./kafka-topic.ts"
import { watchBrokers } from "./broker-watch.ts"
import { makeLocalRecords } from "./local-records.ts"
import { Metrics } from "../observability/metrics.ts"
import { LogIdentityGuard } from "./log-identity.ts"
import { makeSignalLog, SignalLog } from "./signal-log.ts"

/**
 * The `signals` log on Kafka (kafkajs). Records are keyed by user id, placed explicitly by
 * our murmur2 partitioner (the Java client's default), produced idempotently with acks=all.
 * Consumption uses a consumer group only to share partitions between nodes: offsets live in
 * PostgreSQL with the projections (the handler's `assigned` answers them), nothing is
 * committed to Kafka.
 */
const make = Effect.gen(function*() {
  const client = yield* connectKafka
  // Before the topic is created: a database fed from another log refuses this one untouched.
  const guard = yield* LogIdentityGuard
  yield* guard.admit({ kind: "kafka", topic: client.settings.topic, clusterId: yield* clusterIdOf(client) })
  yield* ensureTopic(client)
  /** What this node appends, handed to its own consumer (`run`) without a fetch. */
  const local = makeLocalRecords()
  const watch = yield* watchBrokers(client)
  const append = yield* makeKafkaAppend(client, local, watch)
  return makeSignalLog({
    name: `kafka:${client.settings.topic}`,
    partitions: client.settings.partitions,
    append,
    reader: makeKafkaReader(client),
    consumer: makeKafkaConsumer(client, local, watch),
    ping: Effect.sync(() => !watch.isDown()),
    metrics: yield* Metrics
  })
})

export const KafkaLog = {
  /** SignalLog on the Kafka topic of KAFKA_TOPIC at KAFKA_BROKERS, if the guard admits it. */
  layer: Layer.effect(SignalLog, make)
} as const
