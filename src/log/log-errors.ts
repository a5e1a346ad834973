import { Schema } from "effect"

/** The log cannot start as configured (e.g. its partition count differs from LOG_PARTITIONS). */
export class LogMisconfigured extends Schema.TaggedError<LogMisconfigured>()("LogMisconfigured", {
  message: Schema.String
}) {}
