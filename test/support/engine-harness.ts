import { Effect, Latch, Layer, Option } from "effect"
import { addUsage, evaluationOrder, noUsage, type Usage } from "../../src/domain/rule-evaluation.ts"
import type { Rule } from "../../src/domain/rules.ts"
import type { LogRecord } from "../../src/domain/records.ts"
import { noTargets } from "../../src/domain/recipients.ts"
import { Cluster } from "../../src/engine/cluster.ts"
import { Ingress } from "../../src/engine/ingress.ts"
import { Processor } from "../../src/engine/processor.ts"
import { RuleCache } from "../../src/engine/rule-cache.ts"
import { type LiveCounts, ScopeTotals } from "../../src/engine/scope-totals.ts"
import { VerdictRegistry } from "../../src/engine/verdicts.ts"
import { partitionForKey } from "../../src/log/murmur2.ts"
import { type LogEntry, LogUnavailable, SignalLog } from "../../src/log/signal-log.ts"
import { DatabaseHealth } from "../../src/store/database-health.ts"
import { memoryProjections } from "./memory-projections.ts"

/**
 * The engine in one process with nothing outside it: the real Ingress, Processor, verdict
 * registry, partition workers and fold, over a log and projections kept in memory, so that
 * signal → verdict → rows runs in milliseconds and time is the test's (TestClock under
 * `it.effect`). What needs PostgreSQL or Kafka (the rules' NOTIFY, cluster forwarding, the
 * database's health, other nodes' counts) is replaced by what a lone healthy node would see.
 */
export const engineHarness = (options: { readonly partitions?: number; readonly rules?: ReadonlyArray<Rule> } = {}) => {
  const log = memoryLog(options.partitions ?? 4)
  const store = memoryProjections()
  let rules: ReadonlyArray<Rule> = options.rules ?? []
  let version = 1
  const ruleCache = Layer.succeed(
    RuleCache,
    RuleCache.of({
      // One tenant: the harness's rules are every org's.
      rulesFor: () => evaluationOrder(rules.filter((r) => r.enabled)),
      watched: (_orgId, _environment, scope, scopeId) => rules.some((r) => r.type === "budget" && r.enabled && r.scope === scope && r.scope_id === scopeId),
      // No webhooks or channels: the outbox's own tests address them.
      targetsOf: () => noTargets,
      refresh: Effect.void,
      version: () => version,
      catchUp: () => Effect.void
    })
  )
  const services = Layer.mergeAll(
    log.layer,
    store.layer,
    VerdictRegistry.layer,
    ruleCache,
    localScopeTotals,
    Layer.succeed(
      Cluster,
      Cluster.of({
        nodeId: "node_harness",
        enabled: false,
        claim: () => Effect.void,
        release: () => Effect.void,
        ownerOf: () => Effect.succeedNone,
        authentic: () => false,
        secret: Option.none()
      })
    ),
    Layer.succeed(DatabaseHealth, DatabaseHealth.of({ isDown: () => false, down: Effect.never, up: Effect.void }))
  )
  const layer = Layer.mergeAll(Ingress.layer, Processor.layer).pipe(Layer.provideMerge(services))
  return {
    layer,
    /** The projections as committed (read them after `Processor.settled`). */
    store,
    /** Every record appended, in order (signals, ticks, drift signals). */
    appended: log.appended,
    /** Makes the log refuse the next `n` appends, as an unreachable broker would. */
    refuseAppends: (n: number) => log.refuse(n),
    /** Replaces the rules in force (a management write, as every node comes to hold it). */
    setRules: (next: ReadonlyArray<Rule>) => {
      rules = next
      version++
    }
  }
}

/**
 * A SignalLog in memory: records placed by the same murmur2 partitioner as both real logs, every
 * partition assigned to this node, each partition's new records handed to the handler in offset
 * order as one batch, one batch at a time.
 */
const memoryLog = (partitions: number) => {
  const entries: Array<Array<LogEntry>> = Array.from({ length: partitions }, () => [])
  const appended: Array<LogRecord> = []
  const wake = Array.from({ length: partitions }, () => Latch.makeUnsafe(false))
  let refusals = 0
  const layer = Layer.succeed(
    SignalLog,
    SignalLog.of({
      name: "memory",
      partitions,
      partitionFor: (key) => partitionForKey(key, partitions),
      append: (records) =>
        Effect.suspend(() => {
          if (refusals > 0) {
            refusals--
            return Effect.fail(new LogUnavailable({ message: "the log refused the append", notWritten: true }))
          }
          return Effect.succeed(records.map((record) => {
            const partition = partitionForKey(record.user_id, partitions)
            const offset = entries[partition]!.length
            entries[partition]!.push({ partition, offset, key: record.user_id, record })
            appended.push(record)
            wake[partition]!.openUnsafe()
            return { partition, offset }
          }))
        }),
      run: (handler) =>
        Effect.forEach(entries, (_, partition) =>
          Effect.gen(function*() {
            let next = yield* handler.assigned(partition)
            yield* Effect.forkScoped(
              Effect.gen(function*() {
                yield* wake[partition]!.await
                yield* wake[partition]!.close
                const batch = entries[partition]!.slice(next)
                if (batch.length === 0) return
                yield* handler.batch(partition, batch)
                next += batch.length
              }).pipe(Effect.forever)
            )
            if (entries[partition]!.length > next) wake[partition]!.openUnsafe()
          }), { discard: true }),
      readPartition: (partition, fromOffset, onBatch) => onBatch(entries[partition]!.slice(fromOffset)),
      endOffsets: Effect.sync(() => entries.map((e) => e.length)),
      startOffsets: Effect.succeed(entries.map(() => 0)),
      ping: Effect.succeed(true),
      assignment: Effect.succeed(Option.some(new Set(entries.keys())))
    })
  )
  return { layer, appended, refuse: (n: number) => void (refusals = n) }
}

/** A lone node's shared-scope totals: the sum over its own partitions (no other node announces). */
const localScopeTotals = Layer.sync(ScopeTotals, () => {
  const local = new Map<number, LiveCounts>()
  return ScopeTotals.of({
    attach: (partition, live) => {
      local.set(partition, live)
      return () => void local.delete(partition)
    },
    others: (key, partition) => {
      let total: Usage = noUsage
      for (const [p, live] of local) {
        const counted = p === partition ? undefined : live.get(key)
        if (counted !== undefined) total = addUsage(total, counted)
      }
      return total
    },
    note: () => undefined
  })
})
