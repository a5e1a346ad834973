import { Context, Deferred, Effect, Exit, Layer, Queue, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import type { Environment } from "../domain/environments.ts"
import { noTargets, type TenantTargets } from "../domain/recipients.ts"
import { evaluationOrder } from "../domain/rule-evaluation.ts"
import type { Rule } from "../domain/rules.ts"
import type { SharedScope } from "../domain/scope-usage.ts"
import { loadOutboxTargets, tenantKey } from "../store/outbox-targets.ts"

/** How often the node reloads rules (changes of rules are announced, and reloaded at once). */
const refreshSchedule = Schedule.spaced("1 second")

/** The channel a rules change is announced on, with the new rules version (migration 0016). */
const rulesChannel = "signal_engine_rules"

const scopeOf = (orgId: string, environment: Environment, scope: string, scopeId: string) => `${orgId}/${environment}/${scope}/${scopeId}`

/**
 * The enabled rules of every org and environment, in evaluation order, and the shared scopes
 * (team, org, project) their budgets watch. Each node holds them,
 * so verdicts read memory, never the database. A rule change applies on the node that made it
 * before its answer (the management API reloads), on the others as soon as the database announces
 * it (migration 0016), and, for a signal a node accepted with newer rules than the judging node
 * holds, before that signal is judged (the record carries the accepting node's rules version).
 * The reload every second stays as the fallback while the announcements are not heard.
 * (The shared scopes' usage is kept by ScopeTotals.)
 *
 * It holds the outbox's targets too (webhooks, channels, alert channels: who events go to), on
 * the same version: their changes are announced as rule changes are (store/outbox-targets.ts).
 */
export class RuleCache extends Context.Service<RuleCache, {
  readonly rulesFor: (orgId: string, environment: Environment) => ReadonlyArray<Rule>
  /** Whether an enabled budget rule watches this shared scope. */
  readonly watched: (orgId: string, environment: Environment, scope: SharedScope, scopeId: string) => boolean
  /** What a tenant's events can go to (src/domain/recipients.ts). */
  readonly targetsOf: (orgId: string, environment: Environment) => TenantTargets
  /** Reloads now: what was committed before the call is in force when it ends (after this node changed a rule). */
  readonly refresh: Effect.Effect<void>
  /** The rules version held (migration 0016): stamped on the signals this node accepts. */
  readonly version: () => number
  /** Reloads unless the rules held are at `version` or newer (a signal accepted by a node that held newer rules). */
  readonly catchUp: (version: number) => Effect.Effect<void>
}>()("signal-engine/engine/RuleCache") {
  static readonly layer = Layer.effect(
    RuleCache,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const pg = yield* PgClient.PgClient
      let version = 0
      let rules = new Map<string, ReadonlyArray<Rule>>()
      let watchedScopes = new Set<string>()
      let targets: ReadonlyMap<string, TenantTargets> = new Map()

      const load = Effect.gen(function*() {
        // Read before the rules and targets: what is read is at least this version.
        const [held] = yield* sql<{ readonly version: string }>`SELECT version FROM rules_version`
        // Both at once, so a reload takes no longer than it did with the rules alone.
        const [rows, loadedTargets] = yield* Effect.all([
          sql<Rule & { readonly org_id: string; readonly environment: Environment; readonly created_at: Date; readonly updated_at: Date }>`
            SELECT id, org_id, environment, name, type, enabled, scope, scope_id, priority, condition, action,
              action_config, created_at, updated_at
            FROM rules WHERE enabled`,
          loadOutboxTargets(sql)
        ], { concurrency: 2 })
        const byTenant = new Map<string, Array<Rule>>()
        const watching = new Set<string>()
        for (const r of rows) {
          const key = tenantKey(r.org_id, r.environment)
          const { org_id: _o, environment: _e, ...rule } = r
          const list = byTenant.get(key) ?? []
          list.push({ ...rule, created_at: new Date(r.created_at).toISOString(), updated_at: new Date(r.updated_at).toISOString() })
          byTenant.set(key, list)
          if (r.type === "budget" && r.scope !== "user") {
            watching.add(scopeOf(r.org_id, r.environment, r.scope, r.scope_id))
          }
        }
        rules = new Map([...byTenant].map(([k, list]) => [k, evaluationOrder(list)]))
        watchedScopes = watching
        targets = loadedTargets
        version = Math.max(version, Number(held?.version ?? 0))
      }).pipe(Effect.orDie)

      // One load at a time; callers arriving meanwhile share it.
      let inFlight: Deferred.Deferred<void> | undefined
      const shared: Effect.Effect<void> = Effect.suspend(() => {
        if (inFlight !== undefined) return Deferred.await(inFlight)
        const done = Deferred.makeUnsafe<void>()
        inFlight = done
        const settle = (exit: Exit.Exit<void>) =>
          Effect.sync(() => {
            inFlight = undefined
            Deferred.doneUnsafe(done, exit)
          })
        return Effect.andThen(Effect.forkDetach(Effect.flatMap(Effect.exit(load), settle)), Deferred.await(done))
      })
      // A load already running may have read before the caller's write committed: wait it out, then load.
      const refresh: Effect.Effect<void> = Effect.suspend(() => inFlight === undefined ? shared : Effect.andThen(Effect.exit(Deferred.await(inFlight)), shared))
      // A reload that fails leaves the rules held (the periodic reload tries again): a batch is
      // judged with them rather than stopped.
      const catchUp = (wanted: number): Effect.Effect<void> =>
        Effect.suspend(() =>
          version >= wanted ? Effect.void : refresh.pipe(
            Effect.catchCause((cause) => Effect.logWarning(`rules: could not reload to version ${wanted}; judging with version ${version}`, cause))
          )
        )

      yield* refresh
      // Every node hears a change of rules as soon as it commits, and reloads (the periodic reload
      // stays for shared budget totals, and for whatever a lost listening connection missed).
      yield* Effect.scoped(Effect.gen(function*() {
        const changes = yield* pg.listen(rulesChannel)
        yield* refresh
        for (;;) {
          const notices = yield* Queue.takeAll(changes)
          const newest = Math.max(...Array.from(notices, (n) => Number(n.payload)))
          yield* catchUp(newest)
        }
      })).pipe(
        Effect.catchCause((cause) =>
          Effect.logWarning("rules: lost the notices of rule changes; reloading every second until they are back", cause).pipe(
            Effect.andThen(Effect.sleep("1 second"))
          )
        ),
        Effect.forever,
        Effect.forkScoped
      )
      yield* refresh.pipe(
        Effect.catchCause((cause) => Effect.logWarning("reloading rules failed; keeping the previous ones", cause)),
        Effect.repeat(refreshSchedule),
        Effect.forkScoped
      )

      return RuleCache.of({
        rulesFor: (orgId, environment) => rules.get(tenantKey(orgId, environment)) ?? [],
        watched: (orgId, environment, scope, scopeId) => watchedScopes.has(scopeOf(orgId, environment, scope, scopeId)),
        targetsOf: (orgId, environment) => targets.get(tenantKey(orgId, environment)) ?? noTargets,
        refresh,
        version: () => version,
        catchUp
      })
    })
  )
}
