import { PgClient } from "@effect/sql-pg"
import { Config, Context, Duration, Effect, Layer, Queue, Schedule } from "effect"
import { addUsage, noUsage, type Usage } from "../domain/rule-evaluation.ts"
import { announcedRows, keyOfRow, type ScopeUsageRow, scopeUsageChannel } from "../domain/scope-usage.ts"

/** A partition's counts as its worker holds them on this node: committed, plus the batch being folded. */
export interface LiveCounts {
  readonly get: (key: string) => Usage | undefined
  readonly entries: () => Iterable<readonly [string, Usage]>
}

interface Seen {
  usage: Usage
  /** The reload generation it was heard in (a reload keeps what was heard while it ran). */
  gen: number
}

/** Counts of one partition only grow within a window: of two reports, the larger is the newer. */
const larger = (a: Usage, b: Usage): Usage => ({
  cost_usd: Math.max(a.cost_usd, b.cost_usd),
  tokens_in: Math.max(a.tokens_in, b.tokens_in),
  tokens_out: Math.max(a.tokens_out, b.tokens_out)
})

/**
 * The node-wide totals of the shared budget scopes (team, org, project), per scope window and log
 * partition (DESIGN decision 6). A partition this node owns is read live from its worker, whose
 * counts include the batch it is folding, record by record: a signal folded on any partition of
 * this node sees every usage folded before it on the node, so on one node a shared budget is
 * exact. A partition another node owns is read as last heard: from the counts that node's commits
 * announce (NOTIFY in the commit's transaction), from the read-back of this node's commits, and
 * from a reload of the watched scopes' rows every `SCOPE_USAGE_RELOAD` (default 1 s) in case an
 * announcement was lost.
 */
export class ScopeTotals extends Context.Service<ScopeTotals, {
  /** Reads `partition` from its worker on this node from now on; the returned function stops it. */
  readonly attach: (partition: number, live: LiveCounts) => () => void
  /** The usage of a shared scope window on every partition but `partition`. */
  readonly others: (key: string, partition: number) => Usage
  /** Counts of other nodes' partitions, as read from the database. */
  readonly note: (rows: ReadonlyArray<ScopeUsageRow>) => void
}>()("signal-engine/engine/ScopeTotals") {
  static readonly layer = Layer.effect(
    ScopeTotals,
    Effect.gen(function*() {
      const sql = yield* PgClient.PgClient
      const reloadEvery = yield* Config.Duration("SCOPE_USAGE_RELOAD").pipe(Config.withDefault(Duration.seconds(1)))
      const local = new Map<number, LiveCounts>()
      let remote = new Map<string, Map<number, Seen>>()
      let gen = 0

      const note = (rows: ReadonlyArray<ScopeUsageRow>) => {
        for (const row of rows) {
          const key = keyOfRow(row)
          const usage = { cost_usd: Number(row.cost_usd), tokens_in: Number(row.tokens_in), tokens_out: Number(row.tokens_out) }
          const partitions = remote.get(key) ?? new Map<number, Seen>()
          const seen = partitions.get(row.partition)
          if (seen === undefined) partitions.set(row.partition, { usage, gen })
          else {
            seen.usage = larger(seen.usage, usage)
            seen.gen = gen
          }
          remote.set(key, partitions)
        }
      }

      const others = (key: string, partition: number): Usage => {
        let total = noUsage
        for (const [p, live] of local) {
          if (p === partition) continue
          const counted = live.get(key)
          if (counted !== undefined) total = addUsage(total, counted)
        }
        for (const [p, seen] of remote.get(key) ?? []) {
          if (p !== partition && !local.has(p)) total = addUsage(total, seen.usage)
        }
        return total
      }

      const attach = (partition: number, live: LiveCounts) => {
        local.set(partition, live)
        return () => {
          if (local.get(partition) !== live) return
          local.delete(partition)
          // Until the new owner announces its first commit, the partition counts what it had here.
          for (const [key, usage] of live.entries()) {
            const partitions = remote.get(key) ?? new Map<number, Seen>()
            const seen = partitions.get(partition)
            partitions.set(partition, { usage: seen ? larger(seen.usage, usage) : usage, gen })
            remote.set(key, partitions)
          }
        }
      }

      // Only watched scopes' windows of the last 35 days: the windows a budget can still read.
      const reload = Effect.gen(function*() {
        const started = ++gen
        const rows = yield* sql<ScopeUsageRow>`
          SELECT u.org_id, u.environment, u.scope, u.scope_id, u.window_key, u.partition, u.cost_usd, u.tokens_in, u.tokens_out
          FROM scope_usage u
          WHERE u.updated_at > now() - interval '35 days' AND EXISTS (
            SELECT 1 FROM rules r
            WHERE r.enabled AND r.type = 'budget' AND r.org_id = u.org_id AND r.environment = u.environment
              AND r.scope = u.scope AND r.scope_id = u.scope_id)`
        const heard = remote
        remote = new Map()
        note(rows)
        // What was heard while the query ran may be newer than what it read.
        for (const [key, partitions] of heard) {
          for (const [p, seen] of partitions) {
            if (seen.gen < started) continue
            const into = remote.get(key) ?? new Map<number, Seen>()
            const read = into.get(p)
            into.set(p, { usage: read ? larger(read.usage, seen.usage) : seen.usage, gen: seen.gen })
            remote.set(key, into)
          }
        }
      })

      yield* reload.pipe(Effect.orDie)
      yield* reload.pipe(
        Effect.catchCause((cause) => Effect.logWarning("reloading shared budget usage failed; keeping what was heard", cause)),
        Effect.repeat(Schedule.spaced(reloadEvery)),
        Effect.forkScoped
      )

      const listen = Effect.scoped(Effect.gen(function*() {
        const announcements = yield* sql.listen(scopeUsageChannel)
        for (;;) note(announcedRows((yield* Queue.take(announcements)).payload))
      })).pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning("lost the shared budget announcements; relying on the reload until they are back", cause).pipe(
            Effect.andThen(Effect.sleep("1 second"))
          )
        ),
        Effect.forever
      )
      yield* Effect.forkScoped(listen)

      return ScopeTotals.of({ attach, others, note })
    })
  )
}
