import { Config, type Duration, Effect, Option, Result, Schema } from "effect"
import { LogRecord } from "../domain/records.ts"
import { makeBatcher } from "../lib/batcher.ts"
import { type AppendResult, LogUnavailable } from "./signal-log.ts"

/** Partitions of the `signals` log; one setting for both logs, since it decides where keys go. */
export const LogPartitions = Config.schema(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1024 })),
  "LOG_PARTITIONS"
).pipe(Config.withDefault(8))

/** The partition numbers 0 .. n-1. */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i)

const decodeRecord = Schema.decodeUnknownResult(LogRecord)

/** The log cannot start as configured (e.g. its partition count differs from LOG_PARTITIONS). */
export class LogMisconfigured extends Schema.TaggedError<LogMisconfigured>()("LogMisconfigured", {
  message: Schema.String
}) {}

/** A stored record that does not decode. Never skipped: the partition stops and says where. */
export class UndecodableRecord extends Schema.TaggedError<UndecodableRecord>()("UndecodableRecord", {
  partition: Schema.Number,
  offset: Schema.Number,
  message: Schema.String
}) {}

/** Decodes a record read back from a log (already parsed JSON); synchronous, it runs per record. */
export const decodeStored = (partition: number, offset: number, value: unknown): Result.Result<LogRecord, UndecodableRecord> =>
  Result.mapError(decodeRecord(value), (error) =>
    new UndecodableRecord({
      partition,
      offset,
      message: `record at partition ${partition} offset ${offset} does not decode as LogRecord: ${error.message}`
    }))

/**
 * A record as the log stores it: the JSON of its encoded form, which for v1 is the record itself
 * (every field is a JSON value; no field transforms), so the append path skips a schema encode
 * per record. test/unit/records.test.ts checks that the encoded form is still the record.
 */
export const serializeRecord = (record: LogRecord): string => JSON.stringify(record)

/**
 * How long a caller of append waits. The batch stays in flight after that (the write is not
 * interrupted), so the records may still land: the caller learns "unknown", not "not written".
 */
export const APPEND_TIMEOUT = "10 seconds"

export const appendTimeout = (log: string) =>
<A>(effect: Effect.Effect<A, LogUnavailable>): Effect.Effect<A, LogUnavailable> =>
  effect.pipe(
    Effect.timeoutOption(APPEND_TIMEOUT),
    Effect.flatMap(Option.match({
      onNone: () =>
        Effect.fail(new LogUnavailable({ message: `${log}: append timed out; the records may still be written` })),
      onSome: Effect.succeed
    }))
  )

/** Appends of concurrent callers are collected into one write of up to this many records. */
const APPEND_BATCH = 500

/**
 * A log's `append`: concurrent calls micro-batched into one `write`, each caller bounded by
 * APPEND_TIMEOUT. Calls after the scope closes fail with LogUnavailable. `window` is how long a
 * batch waits for more calls once its first one is there; the calls that arrive while a write is
 * in flight form the next batch whatever it is (docs/decisions.md has each log's).
 */
export const batchedAppend = (
  log: string,
  window: Duration.Input,
  write: (records: ReadonlyArray<LogRecord>) => Effect.Effect<ReadonlyArray<AppendResult>, LogUnavailable>
) =>
  Effect.map(
    makeBatcher({
      maxItems: APPEND_BATCH,
      window,
      write,
      closed: () => new LogUnavailable({ message: `${log}: the log is shutting down`, notWritten: true })
    }),
    (batched) => (records: ReadonlyArray<LogRecord>) => batched(records).pipe(appendTimeout(log))
  )
