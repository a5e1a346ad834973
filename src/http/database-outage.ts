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

export const databaseUnavailable = () => ServiceUnavailable.of(`the database is unavailable; retry in ${retryAfterSeconds} s`, "database_unavailable")

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
