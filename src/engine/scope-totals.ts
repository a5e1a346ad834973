import { PgClient } from "@effect/sql-pg"
import { Config, Context, Duration, Effect, Layer, Queue, Schedule } from "effect"
import type { Environment } from "../domain/environments.ts"
import { addUsage, noUsage, type Usage } from "../domain/rule-evaluation.ts"
import { keyOfRow, type ScopeUsageRow, type SharedScope } from "../domain/scope-usage.ts"

/** Where a node announces the counts its commits wrote for watched scopes. */
const CHANNEL = "signal_engine_scope_usage"
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more: announcements are cut below it. */
const maxPayload = 7_500

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

type Announced = readonly [string, Environment, SharedScope, string, string, number, number, number, number]

const toWire = (r: ScopeUsageRow): Announced =>
  [r.org_id, r.environment, r.scope, r.scope_id, r.window_key, r.partition, r.cost_usd, r.tokens_in, r.tokens_out]

const fromWire = ([org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out]: Announced): ScopeUsageRow =>
  ({ org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out })

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
 * exact. A partition another node owns is read as last heard: from the counts that node announces
 * after each commit (NOTIFY), from the read-back of this node's commits, and from a reload of the
 * watched scopes' rows every `SCOPE_USAGE_RELOAD` (default 1 s) in case an announcement was lost.
 */
export class ScopeTotals extends Context.Service<ScopeTotals, {
  /** Reads `partition` from its worker on this node from now on; the returned function stops it. */
  readonly attach: (partition: number, live: LiveCounts) => () => void
  /** The usage of a shared scope window on every partition but `partition`. */
  readonly others: (key: string, partition: number) => Usage
  /** Counts of other nodes' partitions, as read from the database. */
  readonly note: (rows: ReadonlyArray<ScopeUsageRow>) => void
  /** Tells the other nodes the counts a commit wrote (watched scopes only). Never fails. */
  readonly announce: (rows: ReadonlyArray<ScopeUsageRow>) => Effect.Effect<void>
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

      const announce = (rows: ReadonlyArray<ScopeUsageRow>): Effect.Effect<void> => {
        if (rows.length === 0) return Effect.void
        const payloads: Array<string> = []
        let chunk: Array<string> = []
        let size = 2
        for (const row of rows) {
          const item = JSON.stringify(toWire(row))
          const bytes = Buffer.byteLength(item) + 1
          if (chunk.length > 0 && size + bytes > maxPayload) {
            payloads.push(`[${chunk.join(",")}]`)
            chunk = []
            size = 2
          }
          chunk.push(item)
          size += bytes
        }
        payloads.push(`[${chunk.join(",")}]`)
        return sql`SELECT pg_notify(${CHANNEL}, p) FROM json_array_elements_text(${JSON.stringify(payloads)}::json) AS p`.pipe(
          Effect.asVoid,
          Effect.catchCause((cause) => Effect.logWarning("could not announce shared budget usage; other nodes reload it", cause))
        )
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
        const announcements = yield* sql.listen(CHANNEL)
        for (;;) {
          const { payload } = yield* Queue.take(announcements)
          const rows = (JSON.parse(payload) as ReadonlyArray<Announced>).map(fromWire)
          note(rows)
        }
      })).pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning("lost the shared budget announcements; relying on the reload until they are back", cause).pipe(
            Effect.andThen(Effect.sleep("1 second"))
          )
        ),
        Effect.forever
      )
      yield* Effect.forkScoped(listen)

      return ScopeTotals.of({ attach, others, note, announce })
    })
  )
}
