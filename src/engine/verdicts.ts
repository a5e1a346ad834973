import { Clock, Context, Deferred, Duration, Effect, Layer, Option, Schedule } from "effect"
import { type Outcome, outcomeId } from "../domain/verdict.ts"
import { WaitQueues } from "./verdict-waits.ts"

/** How long a verdict stays answerable after its batch was folded (a forwarded wait may come late). */
const recentFor = Duration.seconds(30)

/** How often waits past their deadline are answered "not yet" (a wait may run over by this much). */
const sweepEvery = Duration.millis(25)

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
 *
 * It is where the engine's two sides meet: the Processor says which partitions this node answers
 * for and completes their outcomes; the Ingress registers waits, and asks the partition's owner
 * over the cluster where this node does not answer for it.
 */
export class VerdictRegistry extends Context.Service<VerdictRegistry, {
  /** Registers a wait that ends at `deadline` (epoch ms) with `undefined` unless its outcome came first. */
  readonly register: (id: string, deadline: number) => Effect.Effect<Deferred.Deferred<Outcome | undefined>>
  /** Takes a wait out before its deadline (its record was never appended), answering it `undefined`. */
  readonly cancel: (id: string, deferred: Deferred.Deferred<Outcome | undefined>) => Effect.Effect<void>
  readonly complete: (outcomes: ReadonlyArray<Outcome>) => Effect.Effect<void>
  /** When `complete` was given this outcome (`performance.now()`), while the outcome is in use: the verdict's `answer` stage. */
  readonly completedAt: (outcome: Outcome) => number | undefined
  /** The outcome of a record, waiting up to `timeout` for it. */
  readonly await: (id: string, timeout: Duration.Input) => Effect.Effect<Option.Option<Outcome>>
  /** How many records' outcomes are waited for now (metrics). */
  readonly waiting: () => number
  /** The Processor answers for this partition from now on (it was assigned to this node). */
  readonly ownPartition: (partition: number) => void
  /** The Processor no longer answers for this partition (revoked). */
  readonly releasePartition: (partition: number) => void
  /** Whether this node's Processor answers for the partition. */
  readonly ownsPartition: (partition: number) => boolean
}>()("signal-engine/engine/VerdictRegistry") {
  static readonly layer = Layer.effect(
    VerdictRegistry,
    Effect.gen(function*() {
      const clock = yield* Clock.Clock
      const waits = new WaitQueues()
      const recent = new Map<string, { readonly outcome: Outcome; readonly at: number }>()
      const owned = new Set<number>()
      // Weak: an outcome's time goes with the outcome, whether or not a request read it.
      const completed = new WeakMap<Outcome, number>()
      const keepMs = Duration.toMillis(recentFor)
      yield* Effect.sync(() => waits.expire(clock.currentTimeMillisUnsafe())).pipe(Effect.repeat(Schedule.spaced(sweepEvery)), Effect.forkScoped)
      const register = (id: string, deadline: number) => Effect.sync(() => waits.register(id, deadline))

      return VerdictRegistry.of({
        register,
        cancel: (id, deferred) => Effect.sync(() => waits.cancel(id, deferred)),
        waiting: () => waits.size,
        ownPartition: (partition) => void owned.add(partition),
        releasePartition: (partition) => void owned.delete(partition),
        ownsPartition: (partition) => owned.has(partition),
        completedAt: (outcome) => completed.get(outcome),
        complete: (outcomes) =>
          Effect.sync(() => {
            const now = clock.currentTimeMillisUnsafe()
            const at = performance.now()
            for (const [id, entry] of recent) {
              if (now - entry.at <= keepMs) break
              recent.delete(id)
            }
            for (const outcome of outcomes) {
              const id = outcomeId(outcome)
              completed.set(outcome, at)
              if (!waits.answer(id, outcome) && !recent.has(id)) {
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
