import { type Duration, Effect, Option } from "effect"
import type { LogRecord } from "../domain/records.ts"
import { makeBatcher } from "../lib/batcher.ts"
import { type AppendResult, LogUnavailable } from "./signal-log.ts"

/**
 * How long a caller of append waits. The batch stays in flight after that (the write is not
 * interrupted), so the records may still land: the caller learns "unknown", not "not written".
 */
export const APPEND_TIMEOUT = "10 seconds"

export const appendTimeout = (log: string) => <A>(effect: Effect.Effect<A, LogUnavailable>): Effect.Effect<A, LogUnavailable> =>
  effect.pipe(
    Effect.timeoutOption(APPEND_TIMEOUT),
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new LogUnavailable({ message: `${log}: append timed out; the records may still be written` })),
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
