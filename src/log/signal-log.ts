import { Context, Effect, Exit, type Option, Schema, type Scope } from "effect"
import type { LogRecord } from "../domain/records.ts"
import { type EngineMetrics, secondsSince } from "../observability/metrics.ts"
import { stepSpan } from "../observability/tracing.ts"
import { partitionForKey } from "./murmur2.ts"

/** A record as read back from the log: where it is, and what it says. */
export interface LogEntry {
  readonly partition: number
  readonly offset: number
  readonly key: string
  readonly record: LogRecord
  /**
   * When this node came to hold the record (`performance.now()`): its append confirmed here, or
   * its fetch. For the verdict's stages (metrics); absent where nobody waits (replay, rereads).
   */
  readonly at?: number
}

export interface AppendResult {
  readonly partition: number
  readonly offset: number
}

/**
 * What a node does with the partitions it owns. The log calls `assigned` before the first
 * batch of a partition (answering the offset to resume from: the next offset to read),
 * `batch` for each batch in offset order (the next batch of that partition waits for it),
 * and `revoked` when the partition moves away or the consumer stops.
 */
export interface PartitionHandler {
  readonly assigned: (partition: number) => Effect.Effect<number>
  readonly batch: (partition: number, entries: ReadonlyArray<LogEntry>) => Effect.Effect<void>
  readonly revoked: (partition: number) => Effect.Effect<void>
}

/**
 * The log could not be written or read (broker or database unreachable, timed out). For an
 * append, `notWritten` says the records are certainly not in the log (the database refused the
 * statement, the log was shutting down); without it they may be (a write timed out in flight, a
 * connection lost mid-request), and a client must not be told they were not accepted.
 */
export class LogUnavailable extends Schema.TaggedError<LogUnavailable>()("LogUnavailable", {
  message: Schema.String,
  notWritten: Schema.optionalKey(Schema.Boolean)
}) {}

/**
 * The `signals` log: partitioned, keyed by user id, append-only, the source of truth.
 * Two implementations, one contract: KafkaLog (KAFKA_BROKERS set) and PgLog (a table).
 * Both place a key on partition `murmur2(key) mod partitions`, as Kafka's default
 * partitioner does, and encode records as JSON.
 */
export class SignalLog extends Context.Service<SignalLog, {
  /**
   * Which log this is, as recorded in `partition_offsets.log`: "pg" for PgLog,
   * "kafka:<topic>" for KafkaLog. Offsets of one log mean nothing in another.
   */
  readonly name: string
  readonly partitions: number
  readonly partitionFor: (key: string) => number
  /**
   * Appends records; when the effect succeeds they are durable (Kafka: acks=all; PgLog:
   * committed). Results are in input order. Concurrent calls are micro-batched.
   */
  readonly append: (records: ReadonlyArray<LogRecord>) => Effect.Effect<ReadonlyArray<AppendResult>, LogUnavailable>
  /** Consumes the partitions this node is assigned, until the scope closes. */
  readonly run: (handler: PartitionHandler) => Effect.Effect<void, never, Scope.Scope>
  /** Reads one partition from an offset to its current end, then completes (replay, tests). */
  readonly readPartition: (
    partition: number,
    fromOffset: number,
    onBatch: (entries: ReadonlyArray<LogEntry>) => Effect.Effect<void>
  ) => Effect.Effect<void, LogUnavailable>
  /** The next offset to be written to each partition (the end of the log). */
  readonly endOffsets: Effect.Effect<ReadonlyArray<number>, LogUnavailable>
  /**
   * The first offset each partition still holds: 0 unless records were deleted from its start
   * (Kafka retention, `kafka-delete-records`, rows deleted by hand); its end when it holds none.
   */
  readonly startOffsets: Effect.Effect<ReadonlyArray<number>, LogUnavailable>
  /** Whether the log answers (readiness). */
  readonly ping: Effect.Effect<boolean>
  /**
   * The partitions the log gives this node now (readiness): none while it has no share yet
   * (KafkaLog: not a member of the consumer group, e.g. just restarted; PgLog: the other nodes
   * are still letting go of its share); an empty set when the other nodes hold them all.
   */
  readonly assignment: Effect.Effect<Option.Option<ReadonlySet<number>>>
}>()("signal-engine/log/SignalLog") {}

/** What a SignalLog offers (the service's shape). */
export type SignalLogService = (typeof SignalLog)["Service"]

/** A log's consumer side: the partitions this node owns, handed to a PartitionHandler. */
export type LogConsumer = Pick<SignalLogService, "run" | "assignment">

/**
 * An append timed and counted (metrics), in a span `SignalLog.append` that names where its first
 * record went (so a trace joins a request to the batch that folds its signal).
 */
const measured = (name: string, append: SignalLogService["append"], metrics: EngineMetrics): SignalLogService["append"] => {
  const duration = metrics.appendDuration.labels({ log: name })
  const errors = metrics.appendErrors.labels({ log: name })
  return (records) =>
    Effect.suspend(() => {
      const started = performance.now()
      return append(records).pipe(
        Effect.tap((results) =>
          results.length === 0 ? Effect.void : Effect.annotateCurrentSpan({
            "signal_engine.partition": results[0]!.partition,
            "signal_engine.offset": results[0]!.offset
          })
        ),
        Effect.onExit((exit) => Effect.sync(() => (Exit.isSuccess(exit) ? duration.observe(secondsSince(started)) : errors.inc()))),
        stepSpan("SignalLog.append", { "signal_engine.log": name, "signal_engine.records": records.length })
      )
    })
}

/**
 * A SignalLog of an implementation's parts: its writer (`append`), its reader (outside any
 * consumer), its consumer and its `ping`. Every log places a key the same way, so the partitioner
 * is built here, and every append is measured here.
 */
export const makeSignalLog = (parts: {
  readonly name: string
  readonly partitions: number
  readonly append: SignalLogService["append"]
  readonly reader: Pick<SignalLogService, "readPartition" | "startOffsets" | "endOffsets">
  readonly consumer: LogConsumer
  readonly ping: SignalLogService["ping"]
  readonly metrics: EngineMetrics
}): SignalLogService =>
  SignalLog.of({
    name: parts.name,
    partitions: parts.partitions,
    partitionFor: (key) => partitionForKey(key, parts.partitions),
    append: measured(parts.name, parts.append, parts.metrics),
    ...parts.reader,
    ...parts.consumer,
    ping: parts.ping
  })
