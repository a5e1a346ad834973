import { Effect } from "effect"
import type { MutableUsage, Usage } from "../domain/rule-evaluation.ts"
import { pruneWindows, scopeKey } from "../domain/scope-usage.ts"
import type { Projections } from "../store/projections.ts"
import type { ScopeTotals } from "./scope-totals.ts"

/** Budget levels remembered as reported before the set is cleared (the event ids dedupe anyway). */
const maxReported = 100_000

/**
 * One partition's counts of the shared budget scopes (team, org, project) on its owner: the
 * committed ones, the batch being committed (lent to the node's other partitions from its fold to
 * its commit, so a signal they fold after a crossing sees it), and the budget levels reported.
 */
export const makePartitionCounts = Effect.fnUntraced(function*(
  projections: Projections["Service"],
  partition: number,
  shared: ScopeTotals["Service"] | undefined
) {
  const committed = new Map<string, Usage>()
  /**
   * A folded batch's counts until it commits. A batch that failed keeps them visible until it is
   * folded again (its records are durable and will count); a fenced one drops them.
   */
  let inFlight: ReadonlyMap<string, MutableUsage> | undefined
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
    inFlight = undefined
  })
  yield* load
  const detach = shared?.attach(partition, {
    get: (key) => inFlight?.get(key) ?? committed.get(key),
    entries: () => committed.entries()
  })

  return {
    /** Reads the stored counts again (after another owner moved the partition on). */
    reload: load,
    committed: (key: string) => committed.get(key),
    /** The node's other partitions' count of a key; undefined without node totals (replay, tests). */
    others: shared === undefined ? undefined : (key: string) => shared.others(key, partition),
    reportedBefore: (id: string) => reported.has(id),
    lend: (counts: ReadonlyMap<string, MutableUsage>) => void (inFlight = counts),
    /** The batch was fenced: its counts never happened here. */
    drop: () => void (inFlight = undefined),
    /** The batch committed: its counts and levels are this partition's. */
    commit: (counts: ReadonlyMap<string, MutableUsage>, levels: ReadonlySet<string>) => {
      for (const [key, usage] of counts) committed.set(key, usage)
      inFlight = undefined
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
