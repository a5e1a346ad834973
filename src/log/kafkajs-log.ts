import { Effect } from "effect"
import { type logCreator, logLevel } from "kafkajs"

/**
 * kafkajs's warnings and errors, into Effect's logger with the service's other logs (which writes
 * a line repeated within 10 s once, with the count: a broker away makes kafkajs repeat itself).
 */
export const kafkajsLogCreator = (runLog: (effect: Effect.Effect<void>) => unknown): logCreator => () => ({ level, log, namespace }) => {
  const { message, timestamp: _timestamp, ...extra } = log
  const line = namespace ? `kafkajs ${namespace}: ${message}` : `kafkajs: ${message}`
  runLog(
    (level === logLevel.ERROR ? Effect.logError(line) : Effect.logWarning(line)).pipe(
      Effect.annotateLogs(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])))
    )
  )
}
