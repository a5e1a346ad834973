import { Context, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import type { RateWindow } from "../domain/plans.ts"

/** The outcome of counting one request, with what the X-RateLimit-* headers report. */
export interface RateDecision {
  readonly allowed: boolean
  /** The binding window: the exhausted one, or the one with the fewest requests left. */
  readonly limit: number
  readonly remaining: number
  /** Unix time (seconds) when the binding window resets. */
  readonly reset: number
  /** Seconds until a refused request may be retried. */
  readonly retryAfter: number
}

/** Old windows are deleted on this schedule; a counter is useless once its window has passed. */
const expirySchedule = Schedule.spaced("10 minutes")

/**
 * Fixed-window request counters kept in PostgreSQL, so every node of a cluster counts against
 * the same limits. One statement per request increments all of the bucket's windows at once,
 * using the database clock so nodes with skewed clocks still agree on window boundaries.
 */
export class RateLimiter extends Context.Service<RateLimiter, {
  readonly consume: (bucket: string, windows: ReadonlyArray<RateWindow>) => Effect.Effect<RateDecision>
  /** Where the bucket stands, counting nothing (for the headers of a request that is not counted). */
  readonly peek: (bucket: string, windows: ReadonlyArray<RateWindow>) => Effect.Effect<RateDecision>
}>()("signal-engine/store/RateLimiter") {
  static readonly layer = Layer.effect(
    RateLimiter,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      yield* sql`DELETE FROM rate_limit_counters WHERE window_start < now() - interval '2 days'`.pipe(
        Effect.repeat(expirySchedule),
        Effect.catchCause((cause) => Effect.logWarning("rate limit counter expiry failed", cause)),
        Effect.forkScoped
      )

      type Row = { readonly window_s: number; readonly count: number; readonly reset: number; readonly now: number }
      const consume = Effect.fn("RateLimiter.consume")(function*(bucket: string, windows: ReadonlyArray<RateWindow>) {
        const sizes = windows.map((w) => w.windowSeconds).join(",")
        const rows = yield* sql<Row>`
          INSERT INTO rate_limit_counters AS c (bucket, window_s, window_start, count)
          SELECT ${bucket}, w.s, to_timestamp(floor(extract(epoch FROM now()) / w.s) * w.s), 1
          FROM unnest(string_to_array(${sizes}, ',')::int[]) AS w(s)
          ON CONFLICT (bucket, window_s, window_start) DO UPDATE SET count = c.count + 1
          RETURNING window_s, count,
            (extract(epoch FROM window_start)::bigint + window_s)::float8 AS reset,
            extract(epoch FROM now())::float8 AS now`.pipe(Effect.orDie)
        return decide(windows, rows)
      })

      const peek = Effect.fn("RateLimiter.peek")(function*(bucket: string, windows: ReadonlyArray<RateWindow>) {
        const sizes = windows.map((w) => w.windowSeconds).join(",")
        const rows = yield* sql<Row>`
          SELECT w.s AS window_s, coalesce(c.count, 0)::int4 AS count,
            (floor(extract(epoch FROM now()) / w.s) * w.s + w.s)::float8 AS reset,
            extract(epoch FROM now())::float8 AS now
          FROM unnest(string_to_array(${sizes}, ',')::int[]) AS w(s)
          LEFT JOIN rate_limit_counters c ON c.bucket = ${bucket} AND c.window_s = w.s
            AND c.window_start = to_timestamp(floor(extract(epoch FROM now()) / w.s) * w.s)`.pipe(Effect.orDie)
        return decide(windows, rows)
      })

      const decide = (windows: ReadonlyArray<RateWindow>, rows: ReadonlyArray<Row>): RateDecision => {
        const counted = windows.map((w) => {
          const row = rows.find((r) => r.window_s === w.windowSeconds)
          const count = row?.count ?? 0
          return {
            limit: w.limit,
            remaining: Math.max(0, w.limit - count),
            exceeded: count > w.limit,
            reset: Math.trunc(row?.reset ?? 0),
            now: row?.now ?? 0
          }
        })
        const exceeded = counted.filter((c) => c.exceeded).sort((a, b) => b.reset - a.reset)
        const binding = exceeded[0] ?? [...counted].sort((a, b) => a.remaining - b.remaining)[0]
        if (!binding) return { allowed: true, limit: 0, remaining: 0, reset: 0, retryAfter: 0 }
        return {
          allowed: exceeded.length === 0,
          limit: binding.limit,
          remaining: binding.remaining,
          reset: binding.reset,
          retryAfter: Math.max(1, Math.ceil(binding.reset - binding.now))
        }
      }

      return RateLimiter.of({ consume, peek })
    })
  )
}
