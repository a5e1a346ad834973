import { Clock, Deferred, Duration, Effect, Exit, Latch, Scope } from "effect"
import type { EventRow } from "../domain/projection-rows.ts"
import type { ScopeUsageRow } from "../domain/scope-usage.ts"
import type { KnownEvent } from "../domain/verdict.ts"
import { type EngineMetrics, secondsSince } from "../observability/metrics.ts"
import { stepSpan } from "../observability/tracing.ts"
import type { BatchWrite } from "../store/batch-write.ts"
import { Pending } from "./write-behind-pending.ts"
import type { Projections } from "../store/projections.ts"

/** What one folded batch writes (a BatchWrite without its place, which the write-behind keeps). */
export type FoldedWrite = Omit<BatchWrite, "log" | "partition" | "fromOffset">

/** A partition whose projections keep failing to commit (retried until they do). */
export interface PartitionFailing {
  readonly since: number
  readonly attempts: number
  readonly error: string
}

/** A partition's projections written behind its verdicts (see makeWriteBehind). */
export interface WriteBehind {
  /**
   * Adds a folded batch of `records` records, ending at `write.nextOffset`; waits while more than
   * `maxLag` records are uncommitted.
   */
  readonly add: (write: FoldedWrite, records: number) => Effect.Effect<void>
  /** Waits until everything added so far is committed (or the partition is fenced or closed). */
  readonly settle: Effect.Effect<void>
  /** The stored events among `ids` that are still waiting to be committed (keyed signals' first copies). */
  readonly findPending: (ids: ReadonlySet<string>) => ReadonlyArray<KnownEvent>
  /** The sequence number of what `add` adds to now. */
  readonly addingSeq: () => number
  /** The sequence number of the last write committed. */
  readonly committedSeq: () => number
  readonly committedOffset: () => number
  readonly uncommitted: () => number
  /** The stored offset when another owner moved it (this owner's view is stale). */
  readonly fencedAt: () => number | undefined
  readonly failing: () => PartitionFailing | undefined
  /** Nothing more is written, and no wait waits for it. */
  readonly close: Effect.Effect<void>
}

export interface WriteBehindOptions {
  readonly projections: Projections["Service"]
  readonly log: string
  readonly partition: number
  /** The partition's stored offset: where the first commit is fenced. */
  readonly from: number
  readonly maxLag: number
  /** A commit went in: the node's other partitions' counts it read back. */
  readonly committed: (others: ReadonlyArray<ScopeUsageRow>) => void
  /** Another owner moved the partition on: this write-behind writes nothing more. */
  readonly fenced?: Effect.Effect<void> | undefined
  readonly metrics?: EngineMetrics | undefined
}

/** A commit that failed is tried again, with backoff, until it commits. */
const retryDelay = (attempt: number) => Duration.min(Duration.millis(100 * 2 ** Math.min(attempt, 10)), Duration.seconds(10))

/**
 * A partition's projections written behind its verdicts. A folded batch's rows are added here and
 * its verdicts answered at once; one commit at a time carries everything folded since the last
 * (the node's Projections coalesces the commits of its partitions into one statement), so under
 * load commits grow larger and fewer instead of queueing. Each commit is fenced on the offset the
 * previous one left, so a partition taken over by another owner is never written twice.
 *
 * The records folded and not yet committed are bounded by `maxLag`: past it, `add` waits for the
 * commit (what a slow or failing database turns into: verdicts slow down, then time out as
 * pending, and nothing grows without bound). A crash in the gap loses nothing: the records are in
 * the log, and their next owner folds them again from the stored offset.
 */
export const makeWriteBehind = Effect.fnUntraced(function*(options: WriteBehindOptions) {
  const { projections, log, partition } = options
  const scope = yield* Scope.make()
  /** Opened when there is something to commit (and by each commit, for those waiting on it). */
  const wake = yield* Latch.make(false)
  /**
   * Completed by the next commit (or fence, or close) and then replaced: a waiter takes the one
   * current when it checked, so a commit between its check and its wait still wakes it.
   */
  let progress = Deferred.makeUnsafe<void>()
  const progressed = () => {
    const done = progress
    progress = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(done, Exit.void)
  }
  let pending = new Pending(options.from, 1)
  let inFlight: Pending | undefined
  /** The last Pending committed (by `seq`), and where it left the partition. */
  let committedSeq = 0
  let committedOffset = options.from
  /** The stored offset when another owner moved it (this owner's view is stale); set once. */
  let fencedAt: number | undefined
  const health: { failing: PartitionFailing | undefined } = { failing: undefined }
  /** Closed (the partition let go): nothing more is written, and no wait waits for it. */
  let closed = false
  const lag = options.metrics?.commitLag

  const commitOnce = commitFenced(projections, log, partition, options.committed, options.metrics?.commitDuration.labels({ partition: String(partition) }))

  const commitPending = Effect.gen(function*() {
    const taken = pending
    inFlight = taken
    pending = new Pending(taken.nextOffset, taken.seq + 1)
    const write = taken.toWrite(log, partition)
    const outcome = yield* commitRetried(commitOnce, write, partition, health)
    inFlight = undefined
    if (outcome === "fenced") {
      fencedAt = yield* projections.nextOffset(log, partition)
      yield* Effect.logWarning(`partition ${partition}: another owner moved the offset past ${write.fromOffset}; this node's view is stale`)
      if (options.fenced !== undefined) yield* Effect.forkDetach(options.fenced)
    } else {
      committedOffset = write.nextOffset
      committedSeq = taken.seq
      lag?.observe(secondsSince(taken.since))
    }
  })

  // The one committer of this partition: waits for work, commits it, tells the waiters.
  yield* Effect.forkIn(
    Effect.gen(function*() {
      yield* wake.await
      yield* wake.close
      if (fencedAt !== undefined || pending.empty) return
      yield* commitPending
      progressed()
    }).pipe(Effect.forever, Effect.interruptible),
    scope
  )

  const uncommitted = () => pending.records + (inFlight?.records ?? 0)

  /** Waits until `done` holds, re-checked after each commit; a partition taken over ends every wait. */
  const until = (done: () => boolean): Effect.Effect<void> =>
    Effect.suspend(() => (done() || fencedAt !== undefined || closed ? Effect.void : Effect.andThen(Deferred.await(progress), until(done))))

  /** Waits until everything added so far is committed. */
  const settle: Effect.Effect<void> = Effect.suspend(() => {
    const target = pending.empty ? (inFlight?.seq ?? committedSeq) : pending.seq
    return until(() => committedSeq >= target)
  })

  const writeBehind: WriteBehind = {
    add: (write, records) =>
      Effect.suspend(() => {
        pending.add(write, records)
        wake.openUnsafe()
        return uncommitted() <= options.maxLag ? Effect.void : until(() => uncommitted() <= options.maxLag)
      }),
    settle,
    findPending: (ids) => {
      const found: Array<KnownEvent> = []
      for (const batch of inFlight === undefined ? [pending] : [inFlight, pending]) {
        for (const e of batch.events) if (ids.has(e.id)) found.push(knownOf(e))
      }
      return found
    },
    addingSeq: () => pending.seq,
    committedSeq: () => committedSeq,
    committedOffset: () => committedOffset,
    uncommitted,
    fencedAt: () => fencedAt,
    failing: () => health.failing,
    close: Effect.andThen(
      Effect.sync(() => void (closed = true)),
      Effect.andThen(Scope.close(scope, Exit.void), Effect.sync(progressed))
    )
  }
  return writeBehind
})

/**
 * Commits `write` until it commits or is fenced: a failed attempt is noted in `health` (readiness
 * shows it) and tried again with backoff.
 */
const commitRetried = (
  commitOnce: (write: BatchWrite, attempt: number) => Effect.Effect<"committed" | "fenced">,
  write: BatchWrite,
  partition: number,
  health: { failing: PartitionFailing | undefined }
): Effect.Effect<"committed" | "fenced"> =>
  Effect.gen(function*() {
    for (let attempt = 0;; attempt++) {
      const exit = yield* Effect.exit(commitOnce(write, attempt))
      if (Exit.isSuccess(exit)) {
        health.failing = undefined
        return exit.value
      }
      const now = yield* Clock.currentTimeMillis
      const failing = health.failing
      health.failing = { since: failing?.since ?? now, attempts: (failing?.attempts ?? 0) + 1, error: String(exit.cause) }
      yield* Effect.logError(`partition ${partition}: commit failed, retrying`, exit.cause)
      yield* Effect.sleep(retryDelay(attempt))
    }
  })

/**
 * One commit of a partition's write, fenced on the offset it starts from: "fenced" when another
 * owner moved the stored offset (unless it is this write's own commit, whose answer was lost).
 */
const commitFenced = (
  projections: Projections["Service"],
  log: string,
  partition: number,
  committed: (others: ReadonlyArray<ScopeUsageRow>) => void,
  duration: { readonly observe: (seconds: number) => void } | undefined
) =>
(write: BatchWrite, attempt: number): Effect.Effect<"committed" | "fenced"> =>
  Effect.gen(function*() {
    const started = performance.now()
    const outcome = yield* projections.commitBatch(write).pipe(stepSpan("PartitionWorker.commit", {
      "signal_engine.partition": partition,
      "signal_engine.from_offset": write.fromOffset,
      "signal_engine.next_offset": write.nextOffset
    }))
    duration?.observe(secondsSince(started))
    if (outcome._tag === "Committed") {
      committed(outcome.others)
      return "committed" as const
    }
    // After an attempt whose answer was lost, the fence fails on this write's own commit.
    if (attempt > 0 && (yield* projections.nextOffset(log, partition)) === write.nextOffset) return "committed" as const
    return "fenced" as const
  })

/** The stored form of a pending event, as a retry of its keyed signal is answered from. */
export const knownOf = (e: EventRow): KnownEvent => ({
  id: e.id,
  session_id: e.session_id,
  log_partition: e.log_partition,
  log_offset: e.log_offset,
  verdict: e.verdict ?? null
})
