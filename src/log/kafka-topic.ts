import { Effect } from "effect"
import type { ConfigResourceTypes } from "kafkajs"
import { type KafkaClient, unavailable } from "./kafka-client.ts"
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
 * Creates the topic with the configured partitions, or checks an existing one has them: with
 * another count, keys would land on other partitions than PgLog or earlier records. Created
 * only when missing: asked to create one that exists, kafkajs logs an error.
 */
export const ensureTopic = ({ admin, settings }: KafkaClient) =>
  Effect.gen(function*() {
    const { topic, partitions } = settings
    const existing = yield* Effect.tryPromise({ try: () => admin.listTopics(), catch: unavailable("listing the topics") })
    if (!existing.includes(topic)) {
      yield* Effect.tryPromise({
        try: () =>
          admin.createTopics({
            waitForLeaders: true,
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
    const metadata = yield* Effect.tryPromise({
      try: () => admin.fetchTopicMetadata({ topics: [topic] }),
      catch: unavailable(`reading the metadata of topic ${topic}`)
    })
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
    const actual = metadata.topics.find((t) => t.name === topic)?.partitions.length ?? 0
    if (actual !== partitions) {
      return yield* new LogMisconfigured({
        message: `KafkaLog: topic ${topic} has ${actual} partitions but LOG_PARTITIONS is ${partitions}; ` +
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
