import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../domain/ids.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import { type Condition, type Rule, type RuleAction, RuleNotFound, type RuleScope, RuleTeamMissing, type RuleType } from "../domain/rules.ts"
import type { PageRequest, Tenant } from "./tenant-pages.ts"

export type { Tenant } from "./tenant-pages.ts"

export interface RuleFields {
  readonly name: string
  readonly type: RuleType
  readonly enabled: boolean
  readonly scope: RuleScope
  readonly scope_id: string
  readonly priority: number
  readonly condition: Condition
  readonly action: RuleAction
  readonly action_config: Readonly<Record<string, unknown>>
}

export interface RuleFilter {
  readonly type?: RuleType | undefined
  /** Any of these types. */
  readonly types?: ReadonlyArray<RuleType> | undefined
  readonly scope?: RuleScope | undefined
  readonly scope_id?: string | undefined
  readonly enabled?: boolean | undefined
}

interface Row extends Omit<Rule, "created_at" | "updated_at"> {
  readonly created_at: Date
  readonly updated_at: Date
}
const toRule = (r: Row): Rule => ({
  id: r.id,
  name: r.name,
  type: r.type,
  enabled: r.enabled,
  scope: r.scope,
  scope_id: r.scope_id,
  priority: r.priority,
  condition: r.condition,
  action: r.action,
  action_config: r.action_config,
  created_at: new Date(r.created_at).toISOString(),
  updated_at: new Date(r.updated_at).toISOString()
})

const columns = "id, name, type, enabled, scope, scope_id, priority, condition, action, action_config, created_at, updated_at"

/** Rules of an org's environment. SQL failures are defects. */
export class Rules extends Context.Service<Rules, {
  /** Fails (422) when a team scope names a team deleted meanwhile. */
  readonly create: (tenant: Tenant, fields: RuleFields) => Effect.Effect<Rule, RuleTeamMissing>
  readonly get: (tenant: Tenant, id: string) => Effect.Effect<Rule, RuleNotFound>
  readonly list: (tenant: Tenant, filter: RuleFilter, page: PageRequest) => Effect.Effect<Page<Rule>>
  readonly replace: (tenant: Tenant, id: string, fields: RuleFields) => Effect.Effect<Rule, RuleNotFound | RuleTeamMissing>
  readonly remove: (tenant: Tenant, id: string) => Effect.Effect<void, RuleNotFound>
  /** Whether `scope_id` names a user or team of the org (or is the org itself). */
  readonly scopeExists: (orgId: string, scope: Exclude<RuleScope, "project">, scopeId: string) => Effect.Effect<boolean>
}>()("signal-engine/store/Rules") {
  static readonly layer = Layer.effect(
    Rules,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const notFound = (id: string) => new RuleNotFound(id)

      /**
       * A team scope holds only while the team exists: checked in the writing statement, with the
       * team's row locked against a concurrent delete (which refuses while rules name the team),
       * so no rule is left scoped to a deleted team.
       */
      const scopeHolds = (tenant: Tenant, f: RuleFields) =>
        f.scope === "team"
          ? sql`EXISTS (SELECT 1 FROM teams WHERE id = ${f.scope_id} AND org_id = ${tenant.orgId} FOR KEY SHARE)`
          : sql`true`
      const teamGone = (f: RuleFields) => new RuleTeamMissing(f.scope_id)

      const create = Effect.fn("Rules.create")(function*(tenant: Tenant, f: RuleFields) {
        const rows = yield* sql<Row>`
          INSERT INTO rules (id, org_id, environment, name, type, enabled, scope, scope_id, priority, condition, action, action_config)
          SELECT ${makeId("rule")}, ${tenant.orgId}, ${tenant.environment}, ${f.name}, ${f.type}, ${f.enabled}, ${f.scope},
            ${f.scope_id}, ${f.priority}, ${JSON.stringify(f.condition)}::jsonb, ${f.action}, ${JSON.stringify(f.action_config)}::jsonb
          WHERE ${scopeHolds(tenant, f)}
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        if (!rows[0]) return yield* teamGone(f)
        return toRule(rows[0])
      })

      const get = Effect.fn("Rules.get")(function*(tenant: Tenant, id: string) {
        const rows = yield* sql<Row>`SELECT ${sql.literal(columns)} FROM rules
          WHERE id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment}`.pipe(Effect.orDie)
        if (!rows[0]) return yield* notFound(id)
        return toRule(rows[0])
      })

      const list = Effect.fn("Rules.list")(function*(tenant: Tenant, filter: RuleFilter, page: PageRequest) {
        const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
        const conditions = [
          sql`org_id = ${tenant.orgId}`,
          sql`environment = ${tenant.environment}`,
          ...(filter.type === undefined ? [] : [sql`type = ${filter.type}`]),
          ...(filter.types === undefined ? [] : [sql`type IN ${sql.in(filter.types)}`]),
          ...(filter.scope === undefined ? [] : [sql`scope = ${filter.scope}`]),
          ...(filter.scope_id === undefined ? [] : [sql`scope_id = ${filter.scope_id}`]),
          ...(filter.enabled === undefined ? [] : [sql`enabled = ${filter.enabled}`]),
          ...(after === undefined ? [] : [sql`id < ${after}`])
        ]
        const rows = yield* sql<Row>`SELECT ${sql.literal(columns)} FROM rules
          WHERE ${sql.and(conditions)} ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
        return toPage(rows.map(toRule), page.limit, (r) => r.id)
      })

      const replace = Effect.fn("Rules.replace")(function*(tenant: Tenant, id: string, f: RuleFields) {
        const rows = yield* sql<Row>`UPDATE rules SET name = ${f.name}, type = ${f.type}, enabled = ${f.enabled},
            scope = ${f.scope}, scope_id = ${f.scope_id}, priority = ${f.priority},
            condition = ${JSON.stringify(f.condition)}::jsonb, action = ${f.action},
            action_config = ${JSON.stringify(f.action_config)}::jsonb, updated_at = now()
          WHERE id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment} AND ${scopeHolds(tenant, f)}
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        if (!rows[0]) {
          yield* get(tenant, id)
          return yield* teamGone(f)
        }
        return toRule(rows[0])
      })

      const remove = Effect.fn("Rules.remove")(function*(tenant: Tenant, id: string) {
        const rows = yield* sql<{ readonly id: string }>`DELETE FROM rules
          WHERE id = ${id} AND org_id = ${tenant.orgId} AND environment = ${tenant.environment} RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound(id)
      })

      const scopeExists = Effect.fn("Rules.scopeExists")(function*(orgId: string, scope: Exclude<RuleScope, "project">, scopeId: string) {
        if (scope === "org") return scopeId === orgId
        const table = { user: "users", team: "teams" }[scope]
        const rows = yield* sql<{ readonly id: string }>`SELECT id FROM ${sql(table)}
          WHERE id = ${scopeId} AND org_id = ${orgId}`.pipe(Effect.orDie)
        return rows.length > 0
      })

      return Rules.of({ create, get, list, replace, remove, scopeExists })
    })
  )
}
