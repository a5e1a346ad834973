import { Effect, Layer } from "effect"
import type { ScopeUsageRow } from "../../src/domain/scope-usage.ts"
import type { EventRow, GoalRow, SessionRow } from "../../src/domain/projection-rows.ts"
import type { UserState } from "../../src/domain/user-state.ts"
import type { OutboxEvent } from "../../src/domain/notices.ts"
import type { BatchWrite, CommitOutcome } from "../../src/store/batch-write.ts"
import { Projections } from "../../src/store/projections.ts"

/**
 * The projection store kept in memory, for exercising the partition worker's batching,
 * caching and restarts over thousands of generated cases (the PostgreSQL implementation has
 * its own integration tests). `failNext` makes the next commits fail, as a lost connection would.
 */
export const memoryProjections = () => {
  const sessions = new Map<string, SessionRow>()
  const events = new Map<string, EventRow>()
  const notices = new Map<string, OutboxEvent>()
  const actors = new Map<string, { partition: number; state: UserState }>()
  const goals = new Map<string, GoalRow>()
  const scopeUsage = new Map<string, ScopeUsageRow>()
  const offsets = new Map<string, number>()
  let failNext = 0

  const layer = Layer.succeed(
    Projections,
    Projections.of({
      nextOffset: (log, partition) => Effect.sync(() => offsets.get(`${log}/${partition}`) ?? 0),
      findEvents: (ids) =>
        Effect.sync(() =>
          ids.flatMap((id) => {
            const e = events.get(id)
            return e
              ? [{ id, session_id: e.session_id, log_partition: e.log_partition, log_offset: e.log_offset, verdict: e.verdict ?? null }]
              : []
          })
        ),
      loadActors: (userIds) =>
        Effect.sync(() =>
          new Map(userIds.flatMap((u) => {
            const a = actors.get(u)
            return a ? [[u, structuredClone(a.state)] as const] : []
          }))
        ),
      actorsWithOpenSessions: (partition) =>
        Effect.sync(() =>
          [...actors].filter(([, a]) => a.partition === partition && Object.keys(a.state.open).length > 0)
            .map(([user_id, a]) => ({ user_id, partition, state: structuredClone(a.state) }))
        ),
      loadScopeUsage: (partition) => Effect.sync(() => [...scopeUsage.values()].filter((r) => r.partition === partition).map((r) => ({ ...r }))),
      commitBatch: (batch: BatchWrite) =>
        Effect.suspend((): Effect.Effect<CommitOutcome> => {
          if (failNext > 0) {
            failNext--
            return Effect.die(new Error("connection lost"))
          }
          if ((offsets.get(`${batch.log}/${batch.partition}`) ?? 0) !== batch.fromOffset) return Effect.succeed({ _tag: "Fenced" } as const)
          for (const s of batch.sessions) sessions.set(s.id, structuredClone(s))
          for (const e of batch.events) if (!events.has(e.id)) events.set(e.id, structuredClone(e))
          for (const n of batch.notices) if (!notices.has(n.id)) notices.set(n.id, structuredClone(n))
          for (const a of batch.actors) actors.set(a.user_id, { partition: a.partition, state: structuredClone(a.state) })
          for (const g of batch.goals) goals.set(g.id, structuredClone(g))
          for (const u of batch.scopeUsage) {
            scopeUsage.set([u.org_id, u.environment, u.scope, u.scope_id, u.window_key, u.partition].join("/"), { ...u })
          }
          offsets.set(`${batch.log}/${batch.partition}`, batch.nextOffset)
          return Effect.succeed({ _tag: "Committed", others: [] } as const)
        }),
      resetPartition: () => Effect.die("not used"),
      resetAll: () => Effect.die("not used"),
      restoreVerdicts: () => Effect.die("not used")
    })
  )

  return {
    layer,
    sessions,
    events,
    notices,
    goals,
    scopeUsage,
    failCommits: (n: number) => {
      failNext = n
    }
  }
}
