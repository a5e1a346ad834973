import { Effect } from "effect"
import { type logCreator, logLevel } from "kafkajs"

/** Lines of one kind (namespace and message, numbers aside) logged at most once per this interval. */
const INTERVAL_MS = 10_000

/**
 * kafkajs's warnings and errors, into Effect's logger with the service's other logs. While a broker
 * is away kafkajs repeats the same few errors several times a second per client (every reconnect
 * attempt, every seed broker tried): the first of a kind is logged, then at most one line per
 * 10 s saying how many were like it.
 */
export const kafkajsLogCreator = (runLog: (effect: Effect.Effect<void>) => unknown): logCreator => () => {
  const kinds = new Map<string, { last: number; unlogged: number }>()
  return ({ level, log, namespace }) => {
    const { message, timestamp: _timestamp, ...extra } = log
    const line = namespace ? `kafkajs ${namespace}: ${message}` : `kafkajs: ${message}`
    const kind = line.replace(/\d+/g, "#")
    const now = Date.now()
    const seen = kinds.get(kind)
    if (seen !== undefined && now - seen.last < INTERVAL_MS) {
      seen.unlogged++
      return
    }
    const repeated = seen !== undefined && seen.unlogged > 0 ? ` (and ${seen.unlogged} more like it in the last ${Math.round((now - seen.last) / 1000)} s)` : ""
    kinds.set(kind, { last: now, unlogged: 0 })
    if (kinds.size > 1_000) kinds.delete(kinds.keys().next().value!)
    runLog(
      (level === logLevel.ERROR ? Effect.logError(line + repeated) : Effect.logWarning(line + repeated)).pipe(
        Effect.annotateLogs(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, String(v)])))
      )
    )
  }
}
