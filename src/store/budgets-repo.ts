import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type BudgetStatus, standingOf } from "../domain/budgets.ts"
import { localDate, noUsage, type Usage } from "../domain/rule-evaluation.ts"
import type { Rule } from "../domain/rules.ts"
import { windowKeyOf } from "../domain/scope-usage.ts"
import type { Tenant } from "./rules-repo.ts"

interface Condition {
  readonly window: "daily" | "monthly"
}

/** A usage as stored: numbers in jsonb, or sums PostgreSQL answers as text (bigint, numeric). */
interface UsageJson {
  readonly cost_usd?: number | string
  readonly tokens_in?: number | string
  readonly tokens_out?: number | string
}

const usageFrom = (u: UsageJson | null | undefined): Usage =>
  u == null ? noUsage : { cost_usd: Number(u.cost_usd ?? 0), tokens_in: Number(u.tokens_in ?? 0), tokens_out: Number(u.tokens_out ?? 0) }

/**
 * The standing of budgets and per-user limits in their current windows, read from the counters the
 * engine folds and commits with every batch (so as current as the last committed batch): the
 * shared scopes' `scope_usage` rows summed over partitions, and each user's own usage in their
 * actor snapshot. The same figures the rules compare on the next signal. SQL failures are defects.
 */
export class Budgets extends Context.Service<Budgets, {
  /** The standing of each given rule of type budget or user_limit (others are skipped), in order. */
  readonly standing: (tenant: Tenant, rules: ReadonlyArray<Rule>, now: Date) => Effect.Effect<ReadonlyArray<BudgetStatus>>
}>()("signal-engine/store/Budgets") {
  static readonly layer = Layer.effect(
    Budgets,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /** Each user's own usage in a window, for the users a rule covers (those with any). */
      const usersUsage = (tenant: Tenant, rule: Rule, usageKey: string) => {
        const covered = rule.type === "budget" || rule.scope === "user"
          ? sql`a.user_id = ${rule.scope_id} AND EXISTS (SELECT 1 FROM users u WHERE u.id = a.user_id AND u.org_id = ${tenant.orgId})`
          : rule.scope === "team"
          ? sql`a.user_id IN (SELECT m.user_id FROM team_members m JOIN teams t ON t.id = m.team_id
              WHERE t.id = ${rule.scope_id} AND t.org_id = ${tenant.orgId})`
          // An org's and a project's limits cover every user of the org (any of them can send to the project).
          : sql`a.user_id IN (SELECT u.id FROM users u WHERE u.org_id = ${tenant.orgId})`
        return sql<{ readonly user_id: string; readonly usage: UsageJson }>`
          SELECT a.user_id, a.state->'usage'->${usageKey} AS usage FROM actor_state a
          WHERE ${covered} AND a.state->'usage' ? ${usageKey}`.pipe(Effect.orDie)
      }

      const standing = Effect.fn("Budgets.standing")(function*(tenant: Tenant, rules: ReadonlyArray<Rule>, now: Date) {
        const limits = rules.filter((r) => r.type === "budget" || r.type === "user_limit")
        if (limits.length === 0) return []
        const zones = yield* sql<{ readonly time_zone: string }>`SELECT time_zone FROM orgs WHERE id = ${tenant.orgId}`
          .pipe(Effect.orDie)
        const timeZone = zones[0]?.time_zone ?? "UTC"
        // The current windows, as a signal accepted now would count in them: the org's calendar day and month.
        const day = localDate(now.toISOString(), timeZone)
        const keys = { daily: day, monthly: day.slice(0, 7) }
        const [bounds] = yield* sql<{ readonly ds: Date; readonly de: Date; readonly ms: Date; readonly me: Date }>`
          SELECT ${day}::date::timestamp AT TIME ZONE ${timeZone} AS ds,
            (${day}::date + 1)::timestamp AT TIME ZONE ${timeZone} AS de,
            ${`${keys.monthly}-01`}::date::timestamp AT TIME ZONE ${timeZone} AS ms,
            (${`${keys.monthly}-01`}::date + interval '1 month') AT TIME ZONE ${timeZone} AS me`.pipe(Effect.orDie)
        const windows = {
          daily: { start: new Date(bounds!.ds).toISOString(), end: new Date(bounds!.de).toISOString() },
          monthly: { start: new Date(bounds!.ms).toISOString(), end: new Date(bounds!.me).toISOString() }
        }

        // The shared scopes' counts, summed over partitions, for every shared budget of the page at once.
        const shared = limits.filter((r) => r.type === "budget" && r.scope !== "user")
        const sharedUsage = new Map<string, Usage>()
        if (shared.length > 0) {
          const rows = yield* sql<{
            readonly scope: string
            readonly scope_id: string
            readonly window_key: string
            readonly cost_usd: number
            readonly tokens_in: string
            readonly tokens_out: string
          }>`SELECT scope, scope_id, window_key, sum(cost_usd) AS cost_usd, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out
            FROM scope_usage
            WHERE org_id = ${tenant.orgId} AND environment = ${tenant.environment}
              AND scope_id IN ${sql.in([...new Set(shared.map((r) => r.scope_id))])}
              AND window_key IN ${sql.in([windowKeyOf("daily", keys.daily), windowKeyOf("monthly", keys.monthly)])}
            GROUP BY scope, scope_id, window_key`.pipe(Effect.orDie)
          for (const r of rows) {
            sharedUsage.set(`${r.scope}\u0001${r.scope_id}\u0001${r.window_key}`, usageFrom(r))
          }
        }

        return yield* Effect.forEach(limits, (rule) =>
          Effect.gen(function*() {
            const c = rule.condition as Condition
            const type = rule.type as "budget" | "user_limit"
            const windowKey = windowKeyOf(c.window, keys[c.window])
            const usageKey = `${tenant.environment}:${windowKey}`
            const usage = type === "budget"
              ? {
                scope: rule.scope === "user"
                  ? usageFrom((yield* usersUsage(tenant, rule, usageKey))[0]?.usage)
                  : sharedUsage.get(`${rule.scope}\u0001${rule.scope_id}\u0001${windowKey}`) ?? noUsage
              }
              : { users: (yield* usersUsage(tenant, rule, usageKey)).map((u) => ({ user_id: u.user_id, usage: usageFrom(u.usage) })) }
            return standingOf({ ...rule, type }, windows[c.window], usage)
          }))
      })

      return Budgets.of({ standing })
    })
  )
}
