import { Duration, Effect, Semaphore } from "effect"
import type { ScopeUsageRow } from "../domain/scope-usage.ts"
import type { EngineMetrics } from "../observability/metrics.ts"
import type { Projections } from "../store/projections.ts"
import { makeWriteBehind, type WriteBehind } from "./write-behind.ts"

/**
 * Where this node's hold on a partition stands:
 * - `open`: folding from `next`; each commit is fenced on the offset the previous one left;
 * - `fenced`: a commit found another owner's offset past ours (a rebalance, a lost lease): our
 *   actors and counts are stale and nothing more is written until resynced;
 * - `resyncing`: taking the stored offset, with a new write-behind, and folding again what we had
 *   folded past it (the same verdicts: they were answered already);
 * - `closed`: let go (revoked): nothing more is folded or written.
 */
export type OwnershipPhase = "open" | "fenced" | "resyncing" | "closed"

/** The moves between phases; `open → fenced` is the write-behind's finding, the rest are made here. */
const transitions: Record<OwnershipPhase, ReadonlyArray<OwnershipPhase>> = {
  open: ["fenced", "resyncing", "closed"],
  fenced: ["resyncing", "closed"],
  resyncing: ["open", "closed"],
  closed: []
}

export interface PartitionOwnership {
  readonly phase: () => OwnershipPhase
  /** The next offset to fold. */
  readonly next: () => number
  /** Moves `next` past a folded batch. */
  readonly advance: (to: number) => void
  /** The write-behind of the current hold (a resync starts a new one). */
  readonly writer: () => WriteBehind
  /** Folds, resyncs and settles' checks take turns (the log hands one batch at a time; a fence's resync starts on its own). */
  readonly turn: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** `fenced → resyncing → open`; nothing in any other phase. The caller holds the turn. */
  readonly resyncIfFenced: Effect.Effect<void>
  /** `open | fenced → resyncing → open`: the stored offset is ahead of ours. The caller holds the turn. */
  readonly resync: Effect.Effect<void>
  /**
   * Waits until what was folded so far is committed, resyncing first if another owner moved on
   * (where the records can be read again).
   */
  readonly settle: Effect.Effect<void>
  /**
   * `→ closed`: commits what is folded (waiting at most `within`; what is not committed by then
   * is folded again by the next owner).
   */
  readonly close: (within?: Duration.Input) => Effect.Effect<void>
}

export const makePartitionOwnership = Effect.fnUntraced(function*(options: {
  readonly projections: Projections["Service"]
  readonly log: string
  readonly partition: number
  readonly maxLag: number
  readonly committed: (others: ReadonlyArray<ScopeUsageRow>) => void
  readonly metrics?: EngineMetrics | undefined
  /** Forgets what the old hold knew (actors, counts) as a resync begins. */
  readonly forget: Effect.Effect<void>
  /**
   * Folds again the records in [from, until) (read from the log) after a resync. Without it the
   * log must deliver them again, and a fence waits for the next batch to be found.
   */
  readonly refold?: ((from: number, until: number) => Effect.Effect<void>) | undefined
}) {
  const { projections, partition } = options
  const lock = yield* Semaphore.make(1)
  const turn = lock.withPermits(1)
  let next = yield* projections.nextOffset(options.log, partition)
  let resyncing = false
  let closed = false

  const phase = (): OwnershipPhase => (closed ? "closed" : resyncing ? "resyncing" : behind.fencedAt() !== undefined ? "fenced" : "open")
  const enter = (to: OwnershipPhase) => {
    const from = phase()
    if (from === to) return
    if (!transitions[from].includes(to)) throw new Error(`partition ${partition}: no move from ${from} to ${to}`)
    if (to === "closed") closed = true
    resyncing = to === "resyncing"
  }

  const startWriting = (from: number) =>
    makeWriteBehind({
      projections,
      log: options.log,
      partition,
      from,
      maxLag: options.maxLag,
      committed: options.committed,
      // A fence found by a commit resyncs at once where the records can be read again.
      fenced: options.refold === undefined ? undefined : turn(Effect.suspend(() => resyncIfFenced)),
      metrics: options.metrics
    })
  let behind: WriteBehind = yield* startWriting(next)

  const resync: Effect.Effect<void> = Effect.gen(function*() {
    if (closed) return
    const folded = next
    enter("resyncing")
    yield* behind.close
    yield* options.forget
    next = yield* projections.nextOffset(options.log, partition)
    behind = yield* startWriting(next)
    yield* Effect.logWarning(`partition ${partition}: another owner moved the partition on; resyncing from offset ${next}`)
    if (options.refold !== undefined && next < folded) yield* options.refold(next, folded)
    if (!closed) enter("open")
  })

  const resyncIfFenced: Effect.Effect<void> = Effect.suspend(() => (phase() === "fenced" ? resync : Effect.void))

  const settle: Effect.Effect<void> = Effect.andThen(
    // In turn: a resync under way has added what it folded again before this waits.
    turn(options.refold !== undefined ? resyncIfFenced : Effect.void),
    Effect.suspend(() => {
      const waited = behind
      return Effect.andThen(
        waited.settle,
        Effect.suspend(() =>
          // Fenced while waiting: what is folded again is committed by the next write-behind.
          options.refold !== undefined && !closed && (waited !== behind || behind.fencedAt() !== undefined) ? settle : Effect.void
        )
      )
    })
  )

  return {
    phase,
    settle,
    next: () => next,
    advance: (to) => void (next = to),
    writer: () => behind,
    turn,
    resyncIfFenced,
    resync,
    close: (within = Duration.seconds(10)) =>
      Effect.andThen(
        Effect.sync(() => enter("closed")),
        Effect.andThen(Effect.ignore(Effect.timeout(Effect.suspend(() => behind.settle), within)), Effect.suspend(() => behind.close))
      )
  } satisfies PartitionOwnership
})
