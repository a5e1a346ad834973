import { Logger } from "effect"

/** A warning or error repeated within this interval is counted, not written again. */
const INTERVAL_MS = 10_000

const serious = new Set(["Warn", "Error", "Fatal"])

/**
 * A logger that writes each warning or error of one kind (level and message) at most once per
 * 10 s, saying on the next line of its kind how many it left out. During an outage every request,
 * every background round and every reconnect attempt fails the same way, several times a second;
 * the log should say so once an interval, not bury everything else. Info and debug lines pass.
 */
export const throttleRepeats = <Output>(inner: Logger.Logger<unknown, Output>, intervalMs = INTERVAL_MS) => {
  const kinds = new Map<string, { last: number; unlogged: number }>()
  return Logger.make<unknown, Output | undefined>((options) => {
    if (!serious.has(options.logLevel)) return inner.log(options)
    const parts: ReadonlyArray<unknown> = Array.isArray(options.message) ? options.message : [options.message]
    const kind = `${options.logLevel} ${typeof parts[0] === "string" ? parts[0] : JSON.stringify(parts[0])}`
    const now = options.date.getTime()
    const seen = kinds.get(kind)
    if (seen !== undefined && now - seen.last < intervalMs) {
      seen.unlogged++
      return undefined
    }
    kinds.delete(kind)
    kinds.set(kind, { last: now, unlogged: 0 })
    // Kinds are few; the bound only guards against messages that carry ids.
    if (kinds.size > 1_000) kinds.delete(kinds.keys().next().value!)
    if (seen === undefined || seen.unlogged === 0) return inner.log(options)
    const note = `(and ${seen.unlogged} more like it in the last ${Math.round((now - seen.last) / 1000)} s)`
    return inner.log({ ...options, message: [...parts, note] })
  })
}
