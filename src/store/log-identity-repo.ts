import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { describeConfigured, describeLog, type LogIdentity, LogIdentityGuard, LogMismatch, logName } from "../log/log-identity.ts"

interface IdentityRow {
  readonly kind: "pg" | "kafka"
  readonly topic: string | null
  readonly cluster_id: string | null
  readonly recorded_at: Date
}

const identityOf = (row: IdentityRow): LogIdentity =>
  row.kind === "pg" ? { kind: "pg" } : { kind: "kafka", topic: row.topic ?? "", clusterId: row.cluster_id ?? "" }

const sameLog = (a: LogIdentity, b: LogIdentity) => a.kind === "pg" ? b.kind === "pg" : b.kind === "kafka" && a.topic === b.topic && a.clusterId === b.clusterId

/** How to point the configuration back at the log the database is fed from. */
const configureFor = (identity: LogIdentity) =>
  identity.kind === "pg"
    ? "unset KAFKA_BROKERS"
    : `set KAFKA_BROKERS to that cluster's brokers and KAFKA_TOPIC=${identity.topic}`

const remedy = "To rebuild this database from the configured log instead (the topic moved to another cluster, say), " +
  "stop the service and run `signal-engine replay --adopt-log` with this configuration. Nothing was changed."

const record = (sql: SqlClient.SqlClient, identity: LogIdentity) =>
  sql`INSERT INTO log_identity (kind, topic, cluster_id)
    VALUES (${identity.kind}, ${identity.kind === "kafka" ? identity.topic : null}, ${identity.kind === "kafka" ? identity.clusterId : null})
    ON CONFLICT (singleton) DO NOTHING`.pipe(Effect.orDie)

/**
 * The log_identity row (migration 0018). On the first start with none, the configured log is
 * recorded, unless the database was already fed from another one before it recorded its log (an
 * upgrade): the logs its partition offsets name (and PgLog's own records) are what fed it, and
 * the configured log is adopted only when it is one of them or there are none. The first of
 * several nodes starting together records it; the others compare with what it recorded. With
 * `adopt` (replay --adopt-log) another log is admitted, and recorded by `adoptAdmitted`.
 */
export const logIdentityGuard = (options: {
  /** Admit any log, to be recorded by `adoptAdmitted` (`replay --adopt-log`); its refusal is logged instead. */
  readonly adopt: boolean
}) =>
  Layer.effect(
    LogIdentityGuard,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let admitted: LogIdentity | undefined
      const recorded = sql<IdentityRow>`SELECT kind, topic, cluster_id, recorded_at FROM log_identity`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )
      /** The logs that fed the projections before the database recorded one. */
      const fedFrom = Effect.gen(function*() {
        const offsets = yield* sql<{ readonly log: string }>`
          SELECT DISTINCT log FROM partition_offsets WHERE next_offset > 0 ORDER BY log`
        const pgRecords = yield* sql`SELECT 1 FROM signal_log LIMIT 1`
        return [...new Set([...offsets.map((r) => r.log), ...(pgRecords.length > 0 ? ["pg"] : [])])]
      }).pipe(Effect.orDie)
      const check = Effect.fn("LogIdentityGuard.check")(function*(configured: LogIdentity) {
        let row = yield* recorded
        if (row === undefined) {
          const fed = yield* fedFrom
          if (fed.length > 0 && !fed.includes(logName(configured))) {
            const names = fed.map((name) => (name === "pg" ? "the PostgreSQL table signal_log" : `Kafka topic ${name.slice("kafka:".length)}`))
            return yield* new LogMismatch({
              fedFrom: names.join(" and "),
              message: `this database's projections were written from ${names.join(" and ")}, but the configuration ` +
                `names ${describeConfigured(configured)}: configure that log instead. ${remedy}`
            })
          }
          yield* record(sql, configured)
          row = yield* recorded
          if (row === undefined) return yield* Effect.die(new Error("log_identity: the recorded row is gone"))
        }
        const fedBy = identityOf(row)
        if (sameLog(fedBy, configured)) return
        return yield* new LogMismatch({
          fedFrom: describeLog(fedBy),
          message: `this database is fed from ${describeLog(fedBy)} (since ${row.recorded_at.toISOString()}), ` +
            `but the configuration names ${describeConfigured(configured)}: ${configureFor(fedBy)}. ${remedy}`
        })
      })
      const admit = (configured: LogIdentity) =>
        options.adopt
          ? Effect.sync(() => void (admitted = configured)).pipe(
            Effect.andThen(check(configured)),
            Effect.catchTag("LogMismatch", (mismatch) =>
              Effect.logWarning(
                `--adopt-log: the database was fed from ${mismatch.fedFrom}; once every projection is rebuilt from ` +
                  `${describeLog(configured)}, it is fed from that`
              ))
          )
          : check(configured)
      const adoptAdmitted = Effect.gen(function*() {
        if (admitted === undefined) return undefined
        yield* sql.withTransaction(Effect.andThen(sql`DELETE FROM log_identity`, record(sql, admitted))).pipe(Effect.orDie)
        return admitted
      })
      return LogIdentityGuard.of({ admit, adoptAdmitted })
    })
  )

export const LogIdentityGuardLive = logIdentityGuard({ adopt: false })
