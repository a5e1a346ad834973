import { Effect } from "effect"
import type { MutableUsage, Usage } from "../domain/rule-evaluation.ts"
import { pruneWindows, scopeKey } from "../domain/scope-usage.ts"
import type { Projections } from "../store/projections.ts"
import type { ScopeTotals } from "./scope-totals.ts"

/** Budget levels remembered as reported before the set is cleared (the event ids dedupe anyway). */
const maxReported = 100_000

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

  return {
    /** Reads the stored counts again (after another owner moved the partition on). */
    reload: load,
    committed: (key: string) => committed.get(key),
    /** The node's other partitions' count of a key; undefined without node totals (replay, tests). */
    others: shared === undefined ? undefined : (key: string) => shared.others(key, partition),
    reportedBefore: (id: string) => reported.has(id),
    /** A batch was folded: its counts and levels are this partition's (its records are in the log). */
    commit: (counts: ReadonlyMap<string, MutableUsage>, levels: ReadonlySet<string>) => {
      for (const [key, usage] of counts) committed.set(key, usage)
      if (reported.size + levels.size > maxReported) reported.clear()
      for (const id of levels) reported.add(id)
      if (committed.size > 2 * prunedAt + 1000) {
        pruneWindows(committed)
        prunedAt = committed.size
      }
    },
    /** Stops lending this partition's counts to the node's totals (revoked). */
    close: () => detach?.()
  }
})
