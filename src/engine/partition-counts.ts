import { Effect } from "effect"
import type { MutableUsage, Usage } from "../domain/rule-evaluation.ts"
import { pruneWindows, scopeKey } from "../domain/scope-usage.ts"
import type { Projections } from "../store/projections.ts"
import type { ScopeTotals } from "./scope-totals.ts"

/** Budget levels remembered as reported before the set is cleared (the event ids dedupe anyway). */
const maxReported = 100_000

/** One partition's counts of the shared budget scopes, as its fold reads and moves them. */
export interface PartitionCounts {
  /** Reads the stored counts again (after another owner moved the partition on). */
  readonly reload: Effect.Effect<void>
  readonly committed: (key: string) => Usage | undefined
  /** The node's other partitions' count of a key; undefined without node totals (replay, tests). */
  readonly others: ((key: string) => Usage) | undefined
  readonly reportedBefore: (id: string) => boolean
  /** A batch was folded: its counts and levels are this partition's (its records are in the log). */
  readonly commit: (counts: ReadonlyMap<string, MutableUsage>, levels: ReadonlySet<string>) => void
  /** Stops lending this partition's counts to the node's totals (revoked). */
  readonly close: () => void
}

/**
 * One partition's counts of the shared budget scopes (team, org, project) on its owner, as of its
 * last folded batch (the node's other partitions read them from the fold on, so a signal they fold
 * after a crossing sees it; the projections commit behind), and the budget levels reported.
 */
export const makePartitionCounts = Effect.fnUntraced(function*(
  projections: Projections["Service"],
  partition: number,
  shared: ScopeTotals["Service"] | undefined
) {
  const committed = new Map<string, Usage>()
  let prunedAt = 0
  /** Budget levels committed to the outbox (their event ids make a repeat a no-op anyway). */
  const reported = new Set<string>()

  const load = Effect.gen(function*() {
    const rows = yield* projections.loadScopeUsage(partition)
    committed.clear()
    for (const { org_id, environment, scope, scope_id, window_key, cost_usd, tokens_in, tokens_out } of rows) {
      committed.set(scopeKey(org_id, environment, scope, scope_id, window_key), { cost_usd, tokens_in, tokens_out })
    }
    prunedAt = committed.size
  })
  yield* load
  const detach = shared?.attach(partition, {
    get: (key) => committed.get(key),
    entries: () => committed.entries()
  })

  const counts: PartitionCounts = {
    reload: load,
    committed: (key) => committed.get(key),
    others: shared === undefined ? undefined : (key) => shared.others(key, partition),
    reportedBefore: (id) => reported.has(id),
    commit: (counts, levels) => {
      for (const [key, usage] of counts) committed.set(key, usage)
      if (reported.size + levels.size > maxReported) reported.clear()
      for (const id of levels) reported.add(id)
      if (committed.size > 2 * prunedAt + 1000) {
        pruneWindows(committed)
        prunedAt = committed.size
      }
    },
    close: () => detach?.()
  }
  return counts
})
