import { Context, type Effect, Schema } from "effect"

/**
 * Which log a database's projections are fed from. Offsets, sessions and counters folded from
 * one log mean nothing against another: a node or a replay pointed at another log would start
 * its partitions from scratch, or empty the projections and rebuild them from nothing.
 */
export type LogIdentity =
  | { readonly kind: "pg" }
  | { readonly kind: "kafka"; readonly topic: string; readonly clusterId: string }

/** The log as `partition_offsets.log` names it (SignalLog's `name`). */
export const logName = (identity: LogIdentity): string => identity.kind === "pg" ? "pg" : `kafka:${identity.topic}`

/** The log as an operator reads it. */
export const describeLog = (identity: LogIdentity): string =>
  identity.kind === "pg" ? "the PostgreSQL table signal_log" : `Kafka topic ${identity.topic} of cluster ${identity.clusterId}`

/** The configured log as an operator reads it, with the setting that chose it. */
export const describeConfigured = (identity: LogIdentity): string =>
  identity.kind === "pg" ? `${describeLog(identity)} (KAFKA_BROKERS is not set)` : `${describeLog(identity)} (KAFKA_BROKERS, KAFKA_TOPIC)`

/** The configured log is not the one the database is fed from; nothing was changed. */
export class LogMismatch extends Schema.TaggedError<LogMismatch>()("LogMismatch", {
  /** The log(s) the database was fed from, as an operator reads them. */
  fedFrom: Schema.String,
  message: Schema.String
}) {}

/**
 * Lets a log start only when it is the one the database is fed from (recording it on a first
 * start). A log calls it once connected and before it creates or writes anything.
 */
export class LogIdentityGuard extends Context.Service<LogIdentityGuard, {
  readonly admit: (configured: LogIdentity) => Effect.Effect<void, LogMismatch>
  /**
   * Records the log last admitted as the one the database is fed from: `replay --adopt-log`,
   * whose guard admits another log, calls it once every projection is rebuilt from that log.
   */
  readonly adoptAdmitted: Effect.Effect<LogIdentity | undefined>
}>()("signal-engine/log/LogIdentityGuard") {}
