import { Cause, Clock, Duration, Effect, Schedule, type Scope } from "effect"
import type { AttemptOutcome, AttemptResult } from "../domain/delivery.ts"

/**
 * What a dispatch loop runs over, for one outbox (webhook deliveries, channel messages): how to
 * lease a round of targets (webhooks, channels), each with its due items, how to send one item
 * and record the attempt, and how to let a target go.
 */
export interface DispatchLoop<Target, Item> {
  /** Names the outbox in the log of a failed round. */
  readonly name: string
  /** Leases targets with due items, oldest first; run once a round. */
  readonly claim: Effect.Effect<ReadonlyArray<Target>>
  readonly items: (target: Target) => ReadonlyArray<Item>
  readonly send: (target: Target, item: Item) => Effect.Effect<AttemptResult>
  readonly record: (target: Target, item: Item, attemptedAt: Date, result: AttemptResult) => Effect.Effect<AttemptOutcome>
  readonly release: (target: Target) => Effect.Effect<void>
}

/** An idle loop looks for due items this often (WEBHOOK_POLL_INTERVAL). */
const idlePoll = (interval: Duration.Duration) => Schedule.spaced(interval)

/**
 * Forks `workers` supervised loops (at least one) over an outbox, for the enclosing scope. Each
 * round leases targets, sends each one's items one after another, recording every attempt
 * before the next, and releases it; a target that has just turned failing (`gave-up`) is
 * paused, so the rest of its items wait for re-enabling. Rounds follow back to back while there
 * is work, then one idle wait.
 */
export const superviseDispatch = <Target, Item>(
  loop: DispatchLoop<Target, Item>,
  options: { readonly workers: number; readonly pollInterval: Duration.Duration }
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sendAll = (target: Target) =>
      Effect.gen(function*() {
        for (const item of loop.items(target)) {
          const attemptedAt = new Date(yield* Clock.currentTimeMillis)
          const result = yield* loop.send(target, item)
          if ((yield* loop.record(target, item, attemptedAt, result)) === "gave-up") return
        }
      }).pipe(Effect.ensuring(loop.release(target)))

    /** One round: lease, send, record. Answers how many targets it served. */
    const round = Effect.gen(function*() {
      const claimed = yield* loop.claim
      yield* Effect.forEach(claimed, sendAll, { concurrency: "unbounded", discard: true })
      return claimed.length
    }).pipe(
      // The loop outlives any one failure (a lost connection, a defect): log it and go on.
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.as(Effect.logError(`${loop.name} dispatcher round failed`, cause), 0)
      )
    )

    const drain = Effect.repeat(round, { while: (served) => served > 0 })

    for (let i = 0; i < Math.max(1, options.workers); i++) {
      yield* Effect.forkScoped(Effect.repeat(drain, idlePoll(options.pollInterval)))
    }
  })
