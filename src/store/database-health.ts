import { Context, Effect, Latch, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"

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

/** How often the database is asked whether it answers. */
const PROBE_EVERY = "250 millis"

/**
 * Whether PostgreSQL can be reached, from a `SELECT 1` a few times a second. Only a refused, lost
 * or shutting-down connection makes it "down" (a slow answer under load is not an outage); the
 * next answer makes it "up". The engine answers at once while it is down, rather than waiting out
 * INGEST_WAIT for verdicts the partition workers cannot reach without it.
 */
export class DatabaseHealth extends Context.Service<DatabaseHealth, {
  readonly isDown: () => boolean
  /** Completes when the database is (or goes) down. */
  readonly down: Effect.Effect<void>
  /** Completes when the database answers (again). */
  readonly up: Effect.Effect<void>
}>()("signal-engine/store/DatabaseHealth") {
  static readonly layer = Layer.effect(
    DatabaseHealth,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const downLatch = yield* Latch.make(false)
      const upLatch = yield* Latch.make(true)
      let down = false
      const probe = sql`SELECT 1`.pipe(
        Effect.timeout("2 seconds"),
        Effect.matchCauseEffect({
          onSuccess: () => down ? Effect.all([downLatch.close, upLatch.open, Effect.sync(() => void (down = false))], { discard: true }) : Effect.void,
          onFailure: (cause) => {
            const unreachable = cause.reasons.some((r) => isDatabaseUnavailable("error" in r ? r.error : "defect" in r ? r.defect : undefined))
            return unreachable && !down
              ? Effect.all([upLatch.close, downLatch.open, Effect.sync(() => void (down = true))], { discard: true })
              : Effect.void
          }
        })
      )
      yield* Effect.forkScoped(Effect.repeat(probe, Schedule.spaced(PROBE_EVERY)))
      return { isDown: () => down, down: downLatch.await, up: upLatch.await }
    })
  )
}
