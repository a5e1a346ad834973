import { Context, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import { evaluationOrder } from "../domain/rule-evaluation.ts"
import type { Rule } from "../domain/rules.ts"

/** How often the node reloads rules and team memberships: a change reaches verdicts within this. */
const refreshSchedule = Schedule.spaced("1 second")

/**
 * The enabled rules of every org and environment, in evaluation order, and the team memberships
 * team-scoped rules need, held by each node and reloaded every second, so verdicts read memory,
 * never the database, and a rule change applies on every node within a second.
 */
export class RuleCache extends Context.Service<RuleCache, {
  readonly rulesFor: (orgId: string, environment: Environment) => ReadonlyArray<Rule>
  readonly teamsOf: (userId: string) => ReadonlyArray<string>
  /** Reloads now (tests, and after this node changed a rule). */
  readonly refresh: Effect.Effect<void>
}>()("signal-engine/engine/RuleCache") {
  static readonly layer = Layer.effect(
    RuleCache,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let rules = new Map<string, ReadonlyArray<Rule>>()
      let teams = new Map<string, ReadonlyArray<string>>()

      const refresh = Effect.gen(function*() {
        const rows = yield* sql<Rule & { readonly org_id: string; readonly environment: Environment; readonly created_at: Date; readonly updated_at: Date }>`
          SELECT id, org_id, environment, name, type, enabled, scope, scope_id, priority, condition, action,
            action_config, created_at, updated_at
          FROM rules WHERE enabled`
        const byTenant = new Map<string, Array<Rule>>()
        for (const r of rows) {
          const key = `${r.org_id}/${r.environment}`
          const { org_id: _o, environment: _e, ...rule } = r
          const list = byTenant.get(key) ?? []
          list.push({ ...rule, created_at: new Date(r.created_at).toISOString(), updated_at: new Date(r.updated_at).toISOString() })
          byTenant.set(key, list)
        }
        rules = new Map([...byTenant].map(([k, list]) => [k, evaluationOrder(list)]))
        // Memberships only matter to team rules; skip the query when there are none.
        if (rows.some((r) => r.scope === "team")) {
          const members = yield* sql<{ readonly user_id: string; readonly team_id: string }>`SELECT user_id, team_id FROM team_members`
          const next = new Map<string, Array<string>>()
          for (const m of members) next.set(m.user_id, [...(next.get(m.user_id) ?? []), m.team_id])
          teams = next
        } else {
          teams = new Map()
        }
      }).pipe(Effect.orDie)

      yield* refresh
      yield* refresh.pipe(
        Effect.catchCause((cause) => Effect.logWarning("reloading rules failed; keeping the previous ones", cause)),
        Effect.repeat(refreshSchedule),
        Effect.forkScoped
      )

      return RuleCache.of({
        rulesFor: (orgId, environment) => rules.get(`${orgId}/${environment}`) ?? [],
        teamsOf: (userId) => teams.get(userId) ?? [],
        refresh
      })
    })
  )
}
