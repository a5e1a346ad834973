import { Effect, Schedule } from "effect"
import type { ConfigResourceTypes } from "kafkajs"
import { describe, type KafkaClient, type KafkaSettings, quietAdmin, unavailable } from "./kafka-client.ts"
import { LogMisconfigured } from "./log-errors.ts"

/** Topic settings that keep every record (the topic is created with them). */
const keepForever: ReadonlyArray<readonly [string, string]> = [
  ["retention.ms", "-1"],
  ["retention.bytes", "-1"],
  ["cleanup.policy", "delete"]
]

/** The protocol's resource type of a topic (Node cannot import kafkajs's `ConfigResourceTypes` as ESM). */
const topicResource: ConfigResourceTypes.TOPIC = 2

/**
 * How often a topic's leaders are asked for, and for how long: the broker learns of a new topic
 * after its controller made it, later on a busy machine.
 */
const leadersPoll = Schedule.spaced("200 millis").pipe(Schedule.upTo({ duration: "30 seconds" }))

/**
 * The topic's partitions once each has a leader that answers. Until then the broker may answer
 * that it does not know the topic, or name a leader that does not serve the partition yet (it
 * publishes its metadata before it takes the lead): asked again until the poll's end, on a quiet
 * client of its own.
 */
const awaitLeaders = (settings: KafkaSettings, topic: string) =>
  Effect.gen(function*() {
    const admin = yield* quietAdmin(settings, "leaders", { connectionTimeout: 3_000 })
    const ask = <A>(request: () => Promise<A>) => Effect.tryPromise({ try: request, catch: describe })
    return yield* Effect.gen(function*() {
      yield* ask(() => admin.connect())
      const metadata = yield* ask(() => admin.fetchTopicMetadata({ topics: [topic] }))
      const partitions = metadata.topics.find((t) => t.name === topic)?.partitions ?? []
      const led = partitions.filter((p) => p.leader >= 0).length
      if (partitions.length === 0 || led < partitions.length) {
        return yield* Effect.fail(`${led} of ${partitions.length} partitions have a leader`)
      }
      // Each leader's offsets, as the reader asks for them first.
      yield* ask(() => admin.fetchTopicOffsets(topic))
      return partitions
    }).pipe(Effect.retry(leadersPoll))
  }).pipe(Effect.scoped, Effect.mapError(unavailable(`waiting for leaders of topic ${topic}`)))

/**
 * Creates the topic with the configured partitions, or checks an existing one has them: with
 * another count, keys would land on other partitions than PgLog or earlier records. Created
 * only when missing: asked to create one that exists, kafkajs logs an error. Another node
 * creating it meanwhile is fine: kafkajs then answers false rather than failing.
 */
export const ensureTopic = ({ admin, settings }: KafkaClient) =>
  Effect.gen(function*() {
    const { topic, partitions } = settings
    const existing = yield* Effect.tryPromise({ try: () => admin.listTopics(), catch: unavailable("listing the topics") })
    if (!existing.includes(topic)) {
      yield* Effect.tryPromise({
        try: () =>
          admin.createTopics({
            // Polled below instead: kafkajs gives up when the broker does not know the topic yet.
            waitForLeaders: false,
            topics: [{
              topic,
              numPartitions: partitions,
              replicationFactor: settings.replicationFactor,
              // The log is the record projections are rebuilt from: nothing is deleted by age or size.
              configEntries: keepForever.map(([name, value]) => ({ name, value }))
            }]
          }),
        catch: unavailable(`creating topic ${topic}`)
      })
    }
    // Also for a topic found: another node may just have created it.
    const led = yield* awaitLeaders(settings, topic)
    // A topic created elsewhere keeps its settings; say what they mean for a replay.
    const described = yield* Effect.tryPromise({
      try: () =>
        admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type: topicResource, name: topic, configNames: keepForever.map(([name]) => name) }]
        }),
      catch: unavailable(`reading the configuration of topic ${topic}`)
    })
    const deviating = (described.resources[0]?.configEntries ?? [])
      .filter((e) => keepForever.some(([name, value]) => name === e.configName && value !== e.configValue))
      .map((e) => `${e.configName}=${e.configValue}`)
    if (deviating.length > 0) {
      yield* Effect.logWarning(
        `KafkaLog: topic ${topic} has ${deviating.join(", ")}: the broker deletes records, and a replay cannot rebuild ` +
          "what they projected (it refuses while the log lacks its start). Expected " +
          keepForever.map(([name, value]) => `${name}=${value}`).join(", ")
      )
    }
    if (led.length !== partitions) {
      return yield* new LogMisconfigured({
        message: `KafkaLog: topic ${topic} has ${led.length} partitions but LOG_PARTITIONS is ${partitions}; ` +
          "changing the count would move users to other partitions"
      })
    }
  })

/** The low and high watermark of each partition of the topic, as the broker answers them. */
export const topicOffsets = ({ admin, settings }: KafkaClient) =>
  Effect.tryPromise({
    try: () => admin.fetchTopicOffsets(settings.topic),
    catch: unavailable("reading the end offsets")
  })
