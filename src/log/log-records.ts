import { Result, Schema } from "effect"
import { LogRecord } from "../domain/records.ts"

/**
 * A record as the log stores it: the JSON of its encoded form, which for v1 is the record itself
 * (every field is a JSON value; no field transforms), so the append path skips a schema encode
 * per record. test/unit/records.test.ts checks that the encoded form is still the record.
 */
export const serializeRecord = (record: LogRecord): string => JSON.stringify(record)

const decodeRecord = Schema.decodeUnknownResult(LogRecord)

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
