import { Cause, Config, Deferred, Duration, Effect, Exit, FiberSet, Layer, Option, Schedule, type Scope, Semaphore } from "effect"
import { type ConfigResourceTypes, type Consumer, Kafka, type KafkaMessage, logLevel, Partitioners, type RecordMetadata } from "kafkajs"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import type { LogRecord } from "../domain/records.ts"
import { patchKafkajs } from "./kafkajs-patches.ts"
import { partitionForKey } from "./murmur2.ts"
import { makeLocalRecords } from "./local-records.ts"
import { batchedAppend, decodeStored, LogMisconfigured, LogPartitions, serializeRecord, type UndecodableRecord } from "./shared.ts"
import { type AppendResult, type LogEntry, LogUnavailable, type PartitionHandler, SignalLog } from "./signal-log.ts"

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
  partitions: LogPartitions
})

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error))

const unavailable = (what: string) => (error: unknown) =>
  new LogUnavailable({ message: `KafkaLog: ${what} failed: ${describe(error)}` })

/** What kafkajs's internal cluster client offers that removing a dead member needs. */
interface KafkajsCluster {
  connect(): Promise<void>
  disconnect(): Promise<void>
  findGroupCoordinator(o: { readonly groupId: string }): Promise<{ leaveGroup(o: { readonly groupId: string; readonly memberId: string }): Promise<unknown> }>
}

/** Member ids of this process's consumers (never removed as a previous incarnation's). */
const liveMembers = new Set<string>()

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

const pauseBackoff = (attempt: number) => Math.min(500 * 2 ** attempt, 30_000)

/**
 * The first records of `messages` that decode, and the failure that ended them, if any.
 * Values are the JSON of the record; keys (user ids) are only for placement.
 */
const decodeMessages = (partition: number, messages: ReadonlyArray<KafkaMessage>) =>
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
      entries.push({ partition, offset, key: message.key?.toString("utf8") ?? "", record: decoded.success })
    }
    return { entries, failure: Option.none<UndecodableRecord>() }
  })

/** Topic settings that keep every record (the topic is created with them). */
const keepForever: ReadonlyArray<readonly [string, string]> = [
  ["retention.ms", "-1"],
  ["retention.bytes", "-1"],
  ["cleanup.policy", "delete"]
]

/** The protocol's resource type of a topic (Node cannot import kafkajs's `ConfigResourceTypes` as ESM). */
const topicResource: ConfigResourceTypes.TOPIC = 2

/** What this node knows about one partition of the consumer group. */
interface PartitionState {
  readonly lock: Semaphore.Semaphore
  /** The group generation (our count of joins) `assigned` was answered for, if it is current. */
  assignedIn: number | undefined
  next: number
  stopped: boolean
}

/**
 * The `signals` log on Kafka (kafkajs). Records are keyed by user id, placed explicitly by
 * our murmur2 partitioner (the Java client's default), produced idempotently with acks=all.
 * Consumption uses a consumer group only to share partitions between nodes: offsets live in
 * PostgreSQL with the projections (the handler's `assigned` answers them), nothing is
 * committed to Kafka.
 */
const make = Effect.gen(function*() {
  const settings = yield* KafkaSettings
  const { topic, partitions } = settings
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
    // kafkajs's warnings and errors go to Effect's logger, with the service's other logs.
    logCreator: () => ({ level, log, namespace }) => {
      const { message, timestamp: _timestamp, ...extra } = log
      const line = namespace ? `kafkajs ${namespace}: ${message}` : `kafkajs: ${message}`
      runLog(
        (level === logLevel.ERROR ? Effect.logError(line) : Effect.logWarning(line)).pipe(
          Effect.annotateLogs(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])))
        )
      )
    }
  })
  const partitionFor = (key: string) => partitionForKey(key, partitions)

  const admin = kafka.admin()
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => admin.connect(), catch: unavailable("connecting the admin client") }),
    () => Effect.promise(() => admin.disconnect().catch(() => undefined))
  )

  // Create the topic with the configured partitions, or check an existing one has them:
  // with another count, keys would land on other partitions than PgLog or earlier records.
  // Created only when missing: asked to create one that exists, kafkajs logs an error.
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

  // One send in flight (the batcher's) and maxInFlightRequests 1: kafkajs's idempotent
  // producer keeps per-partition sequence numbers and only that keeps them in order.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
    // Only consulted for records without a partition, which we never send; naming it
    // silences kafkajs's warning about its v2 default.
    createPartitioner: Partitioners.DefaultPartitioner
  })
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => producer.connect(), catch: unavailable("connecting the producer") }),
    () => Effect.promise(() => producer.disconnect().catch(() => undefined))
  )

  /** What this node appends, handed to its own consumer (`run`) without a fetch. */
  const local = makeLocalRecords()

  const write = (records: ReadonlyArray<LogRecord>) =>
    Effect.gen(function*() {
      const placed = records.map((r) => partitionFor(r.user_id))
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
        catch: unavailable("append")
      })
      // kafkajs sends each partition's records, in input order, as one record batch; the broker
      // answers its base offset, so the i-th record of a partition is at base + i. An idempotent
      // retry that the broker deduplicates answers the original batch's base offset.
      const base = new Map<number, number>()
      for (const m of sent) {
        if (m.errorCode !== 0 || m.baseOffset === undefined) {
          // The broker answered this partition's records with an error: not written.
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
  const append = yield* batchedAppend("KafkaLog", Duration.zero, write)

  const topicOffsets = Effect.tryPromise({
    try: () => admin.fetchTopicOffsets(topic),
    catch: unavailable("reading the end offsets")
  })

  const startOffsets = topicOffsets.pipe(
    Effect.map((offsets) => {
      const starts = range(partitions).map(() => 0)
      for (const o of offsets) if (o.partition < partitions) starts[o.partition] = Number(o.low)
      return starts
    })
  )

  const endOffsets = topicOffsets.pipe(
    Effect.map((offsets) => {
      const ends = range(partitions).map(() => 0)
      for (const o of offsets) if (o.partition < partitions) ends[o.partition] = Number(o.high)
      return ends
    })
  )

  /**
   * The partitions the consumer group gave this node in its latest join; none while it is not a
   * member (starting, or its consumer stopped): readiness tells "owns nothing yet" from "owns
   * nothing because the others own everything".
   */
  let membership: ReadonlySet<number> | undefined

  /**
   * Removes from the group the members this node's previous incarnation left there (same
   * client id: same KAFKA_GROUP_INSTANCE_ID), so a node killed and restarted gets its partitions
   * at its join instead of after the dead member's session timeout; members of this process are
   * kept. kafkajs 2.2.4 has no static membership (group.instance.id) nor a LeaveGroup for
   * another member, so this asks the group's coordinator through kafkajs's own cluster client.
   */
  const removePreviousIncarnation = (groupId: string) =>
    Effect.tryPromise(async () => {
      const described = await admin.describeGroups([groupId])
      const stale = (described.groups[0]?.members ?? [])
        .filter((m) => m.clientId === `signal-engine@${settings.instance}` && !liveMembers.has(m.memberId))
        .map((m) => m.memberId)
      if (stale.length === 0) return stale
      const createCluster = Object.getOwnPropertySymbols(kafka).find((s) => s.description === "private:Kafka:createCluster")
      if (createCluster === undefined) return []
      const cluster = (kafka as unknown as Record<symbol, (o: object) => KafkajsCluster>)[createCluster]!({ allowAutoTopicCreation: false })
      await cluster.connect()
      try {
        const coordinator = await cluster.findGroupCoordinator({ groupId })
        for (const memberId of stale) await coordinator.leaveGroup({ groupId, memberId })
      } finally {
        await cluster.disconnect()
      }
      return stale
    }).pipe(
      Effect.tap((stale) =>
        stale.length > 0 ? Effect.logInfo(`KafkaLog: removed this node's previous membership from ${groupId}: ${stale.join(", ")}`) : Effect.void
      ),
      Effect.catchCause((cause) => Effect.logWarning("KafkaLog: could not remove this node's previous group membership", cause))
    )

  const ping = Effect.tryPromise(() => admin.describeCluster()).pipe(
    Effect.timeout("2 seconds"),
    Effect.as(true),
    Effect.catchCause(() => Effect.succeed(false))
  )

  /** A connected consumer that is disconnected (waiting for its batch in flight) when the scope closes. */
  const scopedConsumer = (groupId: string, onClosed: Effect.Effect<void> = Effect.void) =>
    Effect.acquireRelease(
      Effect.gen(function*() {
        const consumer = kafka.consumer({
          groupId,
          sessionTimeout: settings.sessionTimeoutMs,
          heartbeatInterval: Math.max(500, Math.floor(settings.sessionTimeoutMs / 10)),
          maxWaitTimeInMs: settings.fetchMaxWaitMs,
          minBytes: settings.fetchMinBytes,
          allowAutoTopicCreation: false
        })
        yield* Effect.tryPromise({ try: () => consumer.connect(), catch: unavailable("connecting a consumer") })
        return consumer
      }),
      (consumer) =>
        Effect.promise(() => consumer.disconnect().catch(() => undefined)).pipe(Effect.andThen(onClosed))
    )

  const readPartition = (
    partition: number,
    fromOffset: number,
    onBatch: (entries: ReadonlyArray<LogEntry>) => Effect.Effect<void>
  ) =>
    Effect.gen(function*() {
      const offsets = yield* topicOffsets
      const end = Number(offsets.find((o) => o.partition === partition)?.high ?? 0)
      const start = Math.max(0, fromOffset)
      if (start >= end) return
      yield* Effect.scoped(Effect.gen(function*() {
        const runPromise = yield* FiberSet.makeRuntimePromise<never>()
        const done = yield* Deferred.make<void, LogUnavailable>()
        // kafkajs cannot assign partitions without a group: use a throwaway one, removed after.
        const groupId = `${settings.groupId}-read-${randomUUID()}`
        const consumer = yield* scopedConsumer(
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
                runPromise(Effect.gen(function*() {
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
                }).pipe(Effect.asVoid))
            }),
          catch: unavailable("reading")
        })
        yield* Deferred.await(done)
      }))
    })

  const run = (handler: PartitionHandler): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const runPromise = yield* FiberSet.makeRuntimePromise<never>()
      const states: ReadonlyArray<PartitionState> = yield* Effect.forEach(range(partitions), () =>
        Semaphore.make(1).pipe(Effect.map((lock): PartitionState => ({ lock, assignedIn: undefined, next: 0, stopped: false }))))
      // Our count of group joins; a partition is ours in the latest one only.
      let generation = 0
      let current = new Set<number>()
      let consumer: Consumer | undefined
      /** Runs work started by a kafkajs event; a failure is logged, never an unhandled rejection. */
      const background = (effect: Effect.Effect<void>) =>
        void runPromise(effect.pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError("KafkaLog: rebalance handling failed", cause)
          )
        )).catch(() => undefined)

      /**
       * Brings a partition in line with the latest assignment, under its lock (so never during
       * one of its batches): revoke it if it was assigned in an older generation, then, if it
       * is ours now, ask the handler where to resume, seek there and resume fetching it. Every
       * rebalance reassigns, since another node may have moved the partition on meanwhile.
       */
      const reconcile = (partition: number) => {
        const state = states[partition]!
        return state.lock.withPermits(1)(Effect.gen(function*() {
          if (state.assignedIn !== undefined && state.assignedIn !== generation) {
            state.assignedIn = undefined
            yield* handler.revoked(partition)
          }
          if (!current.has(partition) || state.assignedIn === generation || consumer === undefined) return
          const joined = generation
          state.stopped = false
          state.next = yield* handler.assigned(partition)
          state.assignedIn = joined
          consumer.seek({ topic, partition, offset: String(state.next) })
          consumer.resume([{ topic, partitions: [partition] }])
        }))
      }
      const reconcileAll = (touched: Iterable<number>) =>
        Effect.forEach(new Set(touched), reconcile, { concurrency: "unbounded", discard: true })

      /** A handler defect: revoke, pause, then assign again (reloading the handler's state). */
      const restart = (partition: number, attempt: number) =>
        Effect.gen(function*() {
          const state = states[partition]!
          state.assignedIn = undefined
          yield* handler.revoked(partition)
          const pause = pauseBackoff(attempt)
          yield* Effect.logError(`KafkaLog: partition ${partition} handler failed; restarting in ${pause} ms`)
          yield* Effect.sleep(pause)
          if (!current.has(partition) || consumer === undefined) return
          const joined = generation
          state.next = yield* handler.assigned(partition)
          state.assignedIn = joined
          consumer.seek({ topic, partition, offset: String(state.next) })
        })

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
            yield* restart(partition, attempt)
            return false
          }
          failures.delete(partition)
          states[partition]!.next = entries[entries.length - 1]!.offset + 1
          return true
        })

      /** Records this node appended to a partition it consumes, folded without waiting for their fetch. */
      const takeLocal = (partition: number) => {
        const state = states[partition]!
        return state.lock.withPermits(1)(Effect.suspend(() => {
          if (state.assignedIn !== generation || state.stopped) return Effect.sync(() => local.forget(partition))
          const entries = local.take(partition, state.next)
          return entries.length === 0 ? Effect.void : Effect.asVoid(deliver(partition, entries))
        }))
      }
      const detach = local.attach({
        owns: (partition) => states[partition]!.assignedIn === generation && !states[partition]!.stopped,
        ready: (partition) => background(takeLocal(partition))
      })
      yield* Effect.addFinalizer(() => Effect.sync(detach))

      const eachBatch = (partition: number, messages: ReadonlyArray<KafkaMessage>, resolveOffset: (o: string) => void) => {
        const state = states[partition]!
        return state.lock.withPermits(1)(Effect.gen(function*() {
          // Fetched for an assignment that is gone or not answered yet: the seek that follows
          // the (re)assignment fetches these again.
          if (state.assignedIn !== generation || state.stopped) return
          const fresh = messages.filter((m) => Number(m.offset) >= state.next)
          const first = fresh[0]
          if (first === undefined) {
            const last = messages[messages.length - 1]
            if (last !== undefined) resolveOffset(last.offset)
            return
          }
          if (Number(first.offset) > state.next) {
            yield* Effect.logError(
              `KafkaLog: partition ${partition} has no records ${state.next}..${Number(first.offset) - 1} ` +
                "(deleted by retention?); continuing after them"
            )
          }
          const { entries, failure } = yield* decodeMessages(partition, fresh)
          if (entries.length > 0) {
            if (!(yield* deliver(partition, entries))) return
            resolveOffset(String(entries[entries.length - 1]!.offset))
          }
          if (Option.isSome(failure)) {
            // Never skip a record: stop the partition where it is, loudly.
            state.stopped = true
            consumer?.pause([{ topic, partitions: [partition] }])
            yield* Effect.logError(
              `KafkaLog: partition ${partition} STOPPED: ${failure.value.message}. ` +
                "No later record of this partition is processed until the record is repaired and the node restarted."
            )
            state.assignedIn = undefined
            yield* handler.revoked(partition)
          }
        }))
      }

      const c = yield* scopedConsumer(
        settings.groupId,
        // After the consumer has left the group (its last batch done): revoke what was ours.
        Effect.suspend(() => {
          current = new Set()
          membership = undefined
          generation++
          return reconcileAll(range(partitions))
        })
      )
      consumer = c
      yield* removePreviousIncarnation(settings.groupId)
      yield* Effect.tryPromise({
        try: () => c.subscribe({ topics: [topic], fromBeginning: true }),
        catch: unavailable("subscribing")
      })
      // Emitted after each join and before the generation's first fetch: pause what we got
      // until `assigned` has answered and we have sought there (reconcile resumes it).
      c.on(c.events.GROUP_JOIN, (event) => {
        const mine = event.payload.memberAssignment[topic] ?? []
        const before = current
        generation++
        current = new Set(mine)
        membership = current
        liveMembers.add(event.payload.memberId)
        if (mine.length > 0) c.pause([{ topic, partitions: mine }])
        background(reconcileAll([...before, ...mine]))
      })
      c.on(c.events.CRASH, (event) => {
        if (event.payload.restart) return
        background(
          Effect.logError(`KafkaLog: the consumer stopped: ${describe(event.payload.error)}`).pipe(
            Effect.andThen(Effect.suspend(() => {
              const before = current
              current = new Set()
              membership = undefined
              generation++
              return reconcileAll(before)
            }))
          )
        )
      })
      yield* Effect.tryPromise({
        try: () =>
          c.run({
            autoCommit: false,
            eachBatchAutoResolve: false,
            partitionsConsumedConcurrently: partitions,
            eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
              await runPromise(eachBatch(batch.partition, batch.messages, (offset) =>
                resolveOffset(offset)))
              await heartbeat().catch(() => undefined)
            }
          }),
        catch: unavailable("starting the consumer")
      })
    }).pipe(
      // The broker answered when the layer started; wait for it rather than give up consuming.
      Effect.tapError((e) => Effect.logWarning(`${e.message}; retrying`)),
      Effect.retry(Schedule.spaced("2 seconds")),
      Effect.orDie
    )

  return SignalLog.of({
    name: `kafka:${topic}`,
    partitions,
    partitionFor,
    append,
    run,
    readPartition,
    endOffsets,
    startOffsets,
    ping,
    assignment: Effect.sync(() => Option.fromUndefinedOr(membership))
  })
})

export const KafkaLog = {
  /** SignalLog on the Kafka topic of KAFKA_TOPIC at KAFKA_BROKERS. */
  layer: Layer.effect(SignalLog, make)
} as const
