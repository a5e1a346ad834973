import { Effect, Schema } from "effect"
import { foldBatch, scopeUsageRows } from "../domain/batch-fold.ts"
import { eventIdFor } from "../domain/projection-rows.ts"
import { noRecipients, recipientsOf } from "../domain/recipients.ts"
import { announcementsOf } from "../domain/scope-usage.ts"
import type { FoldSettings } from "../domain/user-state.ts"
import type { KnownEvent } from "../domain/verdict.ts"
import type { LogEntry } from "../log/signal-log.ts"
import { stepSpan } from "../observability/tracing.ts"
import type { Projections } from "../store/projections.ts"
import type { ActorStore } from "./actor-store.ts"
import { driftSignal } from "./drift-signal.ts"
import type { PartitionCounts } from "./partition-counts.ts"
import type { PartitionOwnership } from "./partition-ownership.ts"
import type { PartitionWorkerOptions, Processed } from "./partition-worker-options.ts"

export class BatchFailed extends Schema.TaggedError<BatchFailed>()("BatchFailed", { message: Schema.String }) {}

/**
 * One batch folded into a partition: its users' states (from the actor store), the pure fold
 * (src/domain/batch-fold.ts), the new states and counts taken in one step, and the rows handed
 * to the hold's write-behind. Fails (to be retried by the caller) where a read failed.
 */
export const foldInto = (parts: {
  readonly projections: Projections["Service"]
  readonly actors: ActorStore
  readonly counts: PartitionCounts
  readonly hold: () => PartitionOwnership
  readonly options: PartitionWorkerOptions
  readonly settings: FoldSettings
  readonly notify: boolean
}) => {
  const { projections, actors, counts, hold, options, settings, notify } = parts
  /**
   * The first copies of the batch's signals sent with an idempotency key (their ids derive from
   * the key, so a retry has its first copy's id), by event id: those still waiting to be committed,
   * then the stored ones; the batch adds its own first copies.
   */
  const firstCopies = (entries: ReadonlyArray<LogEntry>): Effect.Effect<Map<string, KnownEvent>> =>
    Effect.gen(function*() {
      const ids = new Set<string>()
      for (const { record } of entries) {
        if (record.kind === "signal" && record.idempotency_key !== undefined) ids.add(eventIdFor(record.signal_id))
      }
      if (ids.size === 0) return new Map<string, KnownEvent>()
      const known = new Map<string, KnownEvent>(hold().writer().findPending(ids).map((e) => [e.id, e]))
      const unknown = [...ids].filter((id) => !known.has(id))
      for (const e of unknown.length === 0 ? [] : yield* projections.findEvents(unknown)) known.set(e.id, e)
      return known
    })

  /** Folds records past `next` and hands their rows to the write-behind; fails (to be retried) on a failed read. */
  const attempt = (entries: ReadonlyArray<LogEntry>, now: number): Effect.Effect<Processed, BatchFailed> =>
    Effect.gen(function*() {
      const users = [...new Set(entries.map((e) => e.key))]
      const states = yield* actors.statesOf(users)
      const known = yield* firstCopies(entries)
      const nextOffset = entries[entries.length - 1]!.offset + 1
      const behind = hold().writer()
      // The fold and the move of the in-memory state in one step, with no yield between: the
      // node's other partitions read the batch's counts from here on, and its outcomes are final
      // (the records are in the log; a crash before the commit folds them again, the same way).
      const folded = yield* Effect.sync(() => {
        const folded = foldBatch(entries, states, known, {
          partition: options.partition,
          settings,
          rules: options.rules,
          notify,
          projectFrom: options.projectFrom,
          committed: counts.committed,
          others: counts.others,
          reportedBefore: counts.reportedBefore,
          scopeKeys: actors.scopeKeysOf
        })
        actors.put(folded.states, now, behind.addingSeq())
        counts.commit(folded.counts, folded.reported)
        hold().advance(nextOffset)
        // Addressed with the rules the batch was judged by: a notify rule names its channels.
        const recipients = options.rules === undefined ? noRecipients : recipientsOf(folded.notices, options.rules)
        return { ...folded, recipients }
      }).pipe(stepSpan("PartitionWorker.fold"))
      const scopes = scopeUsageRows(folded.counts, options.partition, options.rules?.watched)
      yield* behind.add({
        nextOffset,
        sessions: folded.sessions,
        events: folded.events,
        notices: folded.notices,
        recipients: folded.recipients,
        actors: options.deferSnapshots
          ? []
          : users.map((u) => ({ user_id: u, partition: options.partition, state: folded.states.get(u)! })),
        goals: folded.goals,
        scopeUsage: scopes.rows,
        watch: scopes.watch,
        // The other nodes add this commit's counts as soon as it commits.
        announce: options.shared ? announcementsOf(scopes.announced) : undefined
      }, entries.length)
      // Counts that budgets on other nodes watch reach them when the commit announces them: a
      // batch that moved one is answered once committed, so a client's next signal, sent to any
      // node, is judged with it.
      if (options.writeBehind?.announceFirst === true && scopes.announced.length > 0) yield* behind.settle
      return {
        outcomes: folded.outcomes,
        drifts: options.timers ? folded.drifts.map(({ record, drift }) => driftSignal(record, drift, now)) : []
      } satisfies Processed
    }).pipe(Effect.catchCause((cause) => Effect.fail(new BatchFailed({ message: String(cause) }))))
  return attempt
}
