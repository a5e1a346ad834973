import { Clock, Effect } from "effect"
import { ServiceUnavailable } from "../domain/errors.ts"

/**
 * A request that failed because PostgreSQL cannot be reached is answered 503
 * `database_unavailable` with `Retry-After`, not 500: the client did nothing wrong and a retry
 * shortly will do. During an outage every request fails the same way, so the log gets one line
 * per interval with the count, not a stack trace per request.
 */

/** How long a client is told to wait before retrying a 503 (seconds). */
export const retryAfterSeconds = 2

/** SQLSTATEs of a server going away: admin_shutdown, crash_shutdown, cannot_connect_now. */
const goingAway = new Set(["57P01", "57P02", "57P03"])

const sqlStateOf = (u: unknown): string | undefined => {
  for (let cause = u, depth = 0; cause !== null && typeof cause === "object" && depth < 5; depth++) {
    const code = (cause as { readonly code?: unknown }).code
    if (typeof code === "string") return code
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return undefined
}

/** Whether a failure (an SqlError, as repositories die with) means the database is out of reach. */
export const isDatabaseUnavailable = (u: unknown): boolean => {
  if (u === null || typeof u !== "object" || (u as { readonly _tag?: unknown })._tag !== "SqlError") return false
  const reason = (u as { readonly reason?: { readonly _tag?: unknown; readonly cause?: unknown } }).reason
  if (reason?._tag === "ConnectionError") return true
  const state = sqlStateOf(reason?.cause)
  return state !== undefined && goingAway.has(state)
}

export const databaseUnavailable = () =>
  ServiceUnavailable.of(`the database is unavailable; retry in ${retryAfterSeconds} s`, "database_unavailable")

/** Logs the first failure of an outage, then at most one line per `intervalMs` with the count since. */
export const makeOutageLog = (intervalMs = 10_000) => {
  let unlogged = 0
  let lastLogged: number | undefined
  return (error: unknown) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      unlogged++
      if (lastLogged !== undefined && now - lastLogged < intervalMs) return
      const detail = error instanceof Error ? error.message : String(error)
      yield* Effect.logWarning(
        lastLogged === undefined
          ? `database unavailable: answering 503 database_unavailable (${detail})`
          : `database unavailable: ${unlogged} requests answered 503 in the last ${Math.round((now - lastLogged) / 1000)} s (${detail})`
      )
      lastLogged = now
      unlogged = 0
    })
}
