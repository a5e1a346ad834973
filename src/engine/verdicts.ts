import { Clock, Context, Deferred, Duration, Effect, Layer, Option, Schedule } from "effect"
import { type Outcome, outcomeId } from "../domain/verdict.ts"

/** How long a verdict stays answerable after its batch was folded (a forwarded wait may come late). */
const recentFor = Duration.seconds(30)

/** How often waits past their deadline are answered "not yet" (a wait may run over by this much). */
const sweepEvery = Duration.millis(25)

/** One request's wait; waits on the same id (copies of one keyed signal) form a queue. */
interface Wait {
  readonly deferred: Deferred.Deferred<Outcome | undefined>
  readonly deadline: number
  next: Wait | undefined
}

/**
 * Requests waiting for their record to be processed, by signal id (or goal command id). A partition
 * worker completes a batch's verdicts once the batch is folded (its projections are committed
 * behind it, src/engine/write-behind.ts); a verdict nobody on this node waited for is kept for a
 * short while, so a wait that arrives after the fact (forwarded from another node) still gets one.
 *
 * Copies of a keyed signal share its id, and each copy's record has an outcome of its own (the
 * first copy's verdict, then one marked `duplicate` per retry): waits on one id are answered one
 * outcome each, in the order they were registered, so of copies in flight together exactly one
 * is answered as the original.
 *
 * A wait carries its deadline: one sweeper answers the expired ones with `undefined`, so a
 * request costs a map entry, not a timer of its own.
 */
export class VerdictRegistry extends Context.Service<VerdictRegistry, {
  /** Registers a wait that ends at `deadline` (epoch ms) with `undefined` unless its outcome came first. */
  readonly register: (id: string, deadline: number) => Effect.Effect<Deferred.Deferred<Outcome | undefined>>
  /** Takes a wait out before its deadline (its record was never appended), answering it `undefined`. */
  readonly cancel: (id: string, deferred: Deferred.Deferred<Outcome | undefined>) => Effect.Effect<void>
  readonly complete: (outcomes: ReadonlyArray<Outcome>) => Effect.Effect<void>
  /** The outcome of a record, waiting up to `timeout` for it. */
  readonly await: (id: string, timeout: Duration.Input) => Effect.Effect<Option.Option<Outcome>>
  /** How many records' outcomes are waited for now (metrics). */
  readonly waiting: () => number
}>()("signal-engine/engine/VerdictRegistry") {
  static readonly layer = Layer.effect(
    VerdictRegistry,
    Effect.gen(function*() {
      const clock = yield* Clock.Clock
      /** The first wait of each id; the others follow it through `next`. */
      const waiting = new Map<string, Wait>()
      const recent = new Map<string, { readonly outcome: Outcome; readonly at: number }>()
      const keepMs = Duration.toMillis(recentFor)

      /**
       * No wait in `waiting` ends before this (a lower bound: completed waits leave without
       * raising it). Most waits end with their outcome long before their deadline, so most sweeps
       * find nothing due and return at once instead of walking every wait.
       */
      let earliest = Number.POSITIVE_INFINITY
      yield* Effect.sync(() => {
        const now = clock.currentTimeMillisUnsafe()
        if (now < earliest) return
        earliest = Number.POSITIVE_INFINITY
        // Answered once every queue is relinked: an answer can resume its request at once, and a
        // request that completes outcomes must not find an expired wait still queued.
        const expired: Array<Wait> = []
        for (const [id, first] of waiting) {
          let kept: Wait | undefined
          let last: Wait | undefined
          for (let wait: Wait | undefined = first; wait !== undefined; wait = wait.next) {
            if (wait.deadline > now) {
              if (wait.deadline < earliest) earliest = wait.deadline
              if (last === undefined) kept = wait
              else last.next = wait
              last = wait
              continue
            }
            expired.push(wait)
          }
          if (last !== undefined) last.next = undefined
          if (kept === undefined) waiting.delete(id)
          else if (kept !== first) waiting.set(id, kept)
        }
        for (const wait of expired) Deferred.doneUnsafe(wait.deferred, Effect.succeed(undefined))
      }).pipe(Effect.repeat(Schedule.spaced(sweepEvery)), Effect.forkScoped)

      const register = (id: string, deadline: number) =>
        Effect.sync(() => {
          const deferred = Deferred.makeUnsafe<Outcome | undefined>()
          const wait: Wait = { deferred, deadline, next: undefined }
          let tail = waiting.get(id)
          if (tail === undefined) waiting.set(id, wait)
          else {
            while (tail.next !== undefined) tail = tail.next
            tail.next = wait
          }
          if (deadline < earliest) earliest = deadline
          return deferred
        })

      const cancel = (id: string, deferred: Deferred.Deferred<Outcome | undefined>) =>
        Effect.sync(() => {
          let previous: Wait | undefined
          for (let wait = waiting.get(id); wait !== undefined; previous = wait, wait = wait.next) {
            if (wait.deferred !== deferred) continue
            if (previous === undefined) {
              if (wait.next === undefined) waiting.delete(id)
              else waiting.set(id, wait.next)
            } else {
              previous.next = wait.next
            }
            Deferred.doneUnsafe(deferred, Effect.succeed(undefined))
            return
          }
        })

      return VerdictRegistry.of({
        register,
        cancel,
        waiting: () => waiting.size,
        complete: (outcomes) =>
          Effect.sync(() => {
            const now = clock.currentTimeMillisUnsafe()
            for (const [id, entry] of recent) {
              if (now - entry.at <= keepMs) break
              recent.delete(id)
            }
            for (const outcome of outcomes) {
              const id = outcomeId(outcome)
              const wait = waiting.get(id)
              if (wait) {
                if (wait.next === undefined) waiting.delete(id)
                else waiting.set(id, wait.next)
                Deferred.doneUnsafe(wait.deferred, Effect.succeed(outcome))
              } else if (!recent.has(id)) {
                // Nobody waits here (yet): a forwarded wait may still come for it. A keyed
                // signal's first outcome is kept, not its retries' after it.
                recent.set(id, { outcome, at: now })
              }
            }
          }),
        await: (id, timeout) =>
          Effect.suspend(() => {
            const known = recent.get(id)
            if (known) return Effect.succeedSome(known.outcome)
            const deadline = clock.currentTimeMillisUnsafe() + Duration.toMillis(Duration.fromInputUnsafe(timeout))
            return Effect.map(Effect.flatMap(register(id, deadline), Deferred.await), Option.fromUndefinedOr)
          })
      })
    })
  )
}
