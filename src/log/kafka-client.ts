import { Config, Effect, Option } from "effect"
import { type Admin, Kafka, type KafkaMessage, logLevel } from "kafkajs"
import { hostname } from "node:os"
import { kafkajsLogCreator } from "./kafkajs-log.ts"
import { patchKafkajs } from "./kafkajs-patches.ts"
import { LogMisconfigured } from "./log-errors.ts"
import { decodeStored, type UndecodableRecord } from "./log-records.ts"
import { LogPartitions } from "./partitions.ts"
import { type LogEntry, LogUnavailable } from "./signal-log.ts"

/** Short fetch long-polls, so a seek or resume after (re)assignment takes effect quickly. */
const MAX_WAIT_MS = 250

const KafkaSettings = Config.all({
  brokers: Config.String("KAFKA_BROKERS").pipe(
    Config.map((s) => s.split(",").map((b) => b.trim()).filter((b) => b.length > 0))
  ),
  topic: Config.String("KAFKA_TOPIC").pipe(Config.withDefault("signals")),
  groupId: Config.String("KAFKA_GROUP_ID").pipe(Config.withDefault("signal-engine")),
  replicationFactor: Config.Int("KAFKA_REPLICATION_FACTOR").pipe(Config.withDefault(1)),
  // How long a silent consumer keeps its partitions: after a crash, the time until another
  // node takes them over. The broker bounds it (group.min.session.timeout.ms, 6 s by default).
  sessionTimeoutMs: Config.Int("KAFKA_SESSION_TIMEOUT_MS").pipe(Config.withDefault(30_000)),
  // This node's name in the consumer group, the same across its restarts (its host and port
  // unless set): a restarted node removes its previous incarnation's membership before joining,
  // instead of waiting out the session timeout (kafkajs 2.2.4 has no static membership).
  instance: Config.String("KAFKA_GROUP_INSTANCE_ID").pipe(
    Config.orElse(() => Config.Port("PORT").pipe(Config.withDefault(8080), Config.map((port) => `${hostname()}:${port}`)))
  ),
  // A fetch returns when this many bytes are there or after KAFKA_FETCH_MAX_WAIT_MS. The default
  // answers a lone signal at once; under sustained load, e.g. 65536 bytes / 10 ms gives bigger
  // batches and a lower p99, for some idle polling (docs/benchmarks.md has the figures).
  fetchMinBytes: Config.Int("KAFKA_FETCH_MIN_BYTES").pipe(Config.withDefault(1)),
  fetchMaxWaitMs: Config.Int("KAFKA_FETCH_MAX_WAIT_MS").pipe(Config.withDefault(MAX_WAIT_MS)),
  // Idempotent producers appending side by side, each owning the partitions p with p mod n = its
  // number (at most one per partition): one producer has one send in flight, a round trip of
  // acks=all each, and under load the appends queue behind it.
  producers: Config.Int("KAFKA_PRODUCERS").pipe(Config.withDefault(1)),
  partitions: LogPartitions
})

export type KafkaSettings = Config.Success<typeof KafkaSettings>

export const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const unavailable = (what: string) => (error: unknown) => new LogUnavailable({ message: `KafkaLog: ${what} failed: ${describe(error)}` })

/**
 * An admin client of its own for asking the cluster something over and over (is it up, are a
 * topic's leaders there): silent and without retries, since kafkajs logs every refusal as an
 * error and its own retries hold a failing request for seconds. Disconnected with the scope.
 */
export const quietAdmin = (
  settings: KafkaSettings,
  role: string,
  timeouts: { readonly connectionTimeout: number; readonly requestTimeout?: number }
) =>
  Effect.gen(function*() {
    const admin = new Kafka({
      clientId: `signal-engine@${settings.instance}:${role}`,
      brokers: settings.brokers,
      ...timeouts,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING
    }).admin()
    yield* Effect.addFinalizer(() => Effect.promise(() => admin.disconnect().catch(() => undefined)))
    return admin
  })

/** The kafkajs client of one KafkaLog, with its admin connection (open while the scope is). */
export interface KafkaClient {
  readonly settings: KafkaSettings
  readonly kafka: Kafka
  readonly admin: Admin
}

/** Reads the settings, makes the kafkajs client and connects its admin client. */
export const connectKafka = Effect.gen(function*() {
  const settings = yield* KafkaSettings
  if (settings.brokers.length === 0) {
    return yield* new LogMisconfigured({ message: "KafkaLog: KAFKA_BROKERS lists no broker" })
  }
  const services = yield* Effect.context<never>()
  const runLog = Effect.runForkWith(services)
  patchKafkajs()
  const kafka = new Kafka({
    clientId: `signal-engine@${settings.instance}`,
    brokers: settings.brokers,
    connectionTimeout: 3_000,
    logLevel: logLevel.WARN,
    logCreator: kafkajsLogCreator(runLog)
  })
  const admin = kafka.admin()
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => admin.connect(), catch: unavailable("connecting the admin client") }),
    () => Effect.promise(() => admin.disconnect().catch(() => undefined))
  )
  return { settings, kafka, admin } satisfies KafkaClient
})

/** The id of the Kafka cluster the brokers belong to (the same on every broker, kept across restarts). */
export const clusterIdOf = ({ admin }: KafkaClient) =>
  Effect.tryPromise({ try: () => admin.describeCluster(), catch: unavailable("describing the cluster") }).pipe(
    Effect.map((cluster) => cluster.clusterId)
  )

/** A connected consumer that is disconnected (waiting for its batch in flight) when the scope closes. */
export const scopedConsumer = (
  { kafka, settings }: KafkaClient,
  groupId: string,
  onClosed: Effect.Effect<void> = Effect.void,
  options: { readonly restart?: boolean } = {}
) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const consumer = kafka.consumer({
        groupId,
        sessionTimeout: settings.sessionTimeoutMs,
        heartbeatInterval: Math.max(500, Math.floor(settings.sessionTimeoutMs / 10)),
        maxWaitTimeInMs: settings.fetchMaxWaitMs,
        minBytes: settings.fetchMinBytes,
        allowAutoTopicCreation: false,
        // Whether kafkajs restarts a consumer that crashed on a retriable error (on its own terms).
        ...(options.restart === false ? { retry: { restartOnFailure: async () => false } } : {})
      })
      yield* Effect.tryPromise({ try: () => consumer.connect(), catch: unavailable("connecting a consumer") })
      return consumer
    }),
    (consumer) => Effect.promise(() => consumer.disconnect().catch(() => undefined)).pipe(Effect.andThen(onClosed))
  )

/**
 * The first records of `messages` that decode, and the failure that ended them, if any.
 * Values are the JSON of the record; keys (user ids) are only for placement.
 */
export const decodeMessages = (partition: number, messages: ReadonlyArray<KafkaMessage>, at?: number) =>
  Effect.sync(() => {
    const entries: Array<LogEntry> = []
    for (const message of messages) {
      const offset = Number(message.offset)
      let json: unknown
      try {
        json = JSON.parse(message.value?.toString("utf8") ?? "null")
      } catch {
        json = undefined
      }
      const decoded = decodeStored(partition, offset, json)
      if (decoded._tag === "Failure") return { entries, failure: Option.some(decoded.failure) }
      const key = message.key?.toString("utf8") ?? ""
      entries.push(at === undefined ? { partition, offset, key, record: decoded.success } : { partition, offset, key, record: decoded.success, at })
    }
    return { entries, failure: Option.none<UndecodableRecord>() }
  })
