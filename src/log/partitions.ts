import { Config, Schema } from "effect"

/** Partitions of the `signals` log; one setting for both logs, since it decides where keys go. */
export const LogPartitions = Config.schema(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1024 })),
  "LOG_PARTITIONS"
).pipe(Config.withDefault(8))

/** The partition numbers 0 .. n-1. */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i)
