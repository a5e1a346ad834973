import { DateTime, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { BadRequest, Forbidden, Unprocessable } from "../../domain/errors.ts"
import { type RuleReach, teamLeadMayChange } from "../../domain/roles.ts"
import { Tenancy } from "../../store/tenancy-repo.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import { channelIdsOf } from "../../domain/channels.ts"
import { decodeCondition, semanticProblems } from "../../domain/rules.ts"
import { Channels } from "../../store/channels-repo.ts"
import { Budgets } from "../../store/budgets-repo.ts"
import { type RuleFields, Rules, type Tenant } from "../../store/rules-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { serviceOnTheWire } from "../refusals.ts"
import { ManagementApi } from "./api.ts"

const tenantOfPrincipal = ApiPrincipal.use((p) => Effect.succeed<Tenant>({ orgId: p.orgId, environment: p.environment }))

type Draft = Omit<RuleFields, "condition"> & { readonly condition: unknown }

const maxProjectIdLength = 200

export const RulesHandlers = HttpApiBuilder.group(ManagementApi, "rules", (handlers) =>
  Effect.gen(function*() {
    const rules = serviceOnTheWire(yield* Rules)
    const channels = serviceOnTheWire(yield* Channels)
    const tenancy = yield* Tenancy

    /**
     * A person whose role changes only some rules (a team lead: the budgets of the teams they
     * lead) may change these, as they are and as they will be; 403 insufficient_role otherwise.
     */
    const mayChange = (...reach: ReadonlyArray<RuleReach>) =>
      ApiPrincipal.use((p) =>
        Effect.gen(function*() {
          const person = p.person
          if (person === undefined || person.visibility !== "led_teams") return
          const led = yield* tenancy.ledTeams(p.orgId, person.userId)
          if (reach.every((r) => teamLeadMayChange(r, led))) return
          return yield* Forbidden.of(
            "the team_lead role changes only budget rules scoped to a team the person leads",
            "insufficient_role"
          )
        })
      )

    /**
     * A draft becomes a rule only if its condition has its type's shape and every value makes sense
     * (422). A shape that does not fit is 400 when the body named both (its document says which
     * shape goes with which type), 422 when one came from the stored rule (no document can say it).
     */
    const validate = Effect.fnUntraced(function*(tenant: Tenant, draft: Draft, shapeInBody = true) {
      const decoded = decodeCondition(draft.type, draft.condition)
      if ("error" in decoded) {
        return yield* (shapeInBody ? BadRequest.of(decoded.error, "invalid_condition") : Unprocessable.of(decoded.error, "invalid_condition"))
      }
      const fields: RuleFields = { ...draft, condition: decoded.ok }
      const problems = [...semanticProblems(fields)]
      if (fields.scope === "project") {
        // A project is the project_id signals carry (spec §2.1), registered or not.
        if (fields.scope_id.trim().length === 0 || fields.scope_id.length > maxProjectIdLength) {
          problems.push(`scope_id: a project_id of 1 to ${maxProjectIdLength} characters, not blank`)
        }
      } else if (!(yield* rules.scopeExists(tenant.orgId, fields.scope, fields.scope_id))) {
        problems.push(`scope_id: no ${fields.scope} ${fields.scope_id} in this org`)
      }
      // A notify rule's channels must be the tenant's (they are looked up again at every firing).
      const named = channelIdsOf(fields.action, fields.action_config)
      if ("problem" in named) problems.push(named.problem)
      else {
        const unknown = yield* channels.missing(tenant, named.ids)
        if (unknown.length > 0) problems.push(`action_config.channels: no channel ${unknown.join(", ")} in this org and environment`)
      }
      if (problems.length > 0) return yield* Unprocessable.of(problems.join("; "), "validation_error")
      return fields
    })

    const tenantOf = tenantOfPrincipal

    return handlers
      .handle("list", ({ query }) =>
        Effect.flatMap(tenantOf, (tenant) =>
          rules.list(
            tenant,
            {
              type: query.type,
              scope: query.scope,
              scope_id: query.scope_id,
              enabled: query.enabled === undefined ? undefined : query.enabled === "true"
            },
            { limit: query.limit ?? defaultPageSize, cursor: query.cursor }
          )))
      .handle("get", ({ params }) => Effect.flatMap(tenantOf, (tenant) => rules.get(tenant, params.id)))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const tenant = yield* tenantOf
          const fields = yield* validate(tenant, {
            name: payload.name,
            type: payload.type,
            enabled: payload.enabled ?? true,
            scope: payload.scope,
            scope_id: payload.scope_id,
            priority: payload.priority ?? 100,
            condition: payload.condition,
            action: payload.action,
            action_config: payload.action_config ?? {}
          })
          yield* mayChange(fields)
          return yield* rules.create(tenant, fields)
        }))
      .handle("update", ({ params, payload }) =>
        Effect.gen(function*() {
          const tenant = yield* tenantOf
          const current = yield* rules.get(tenant, params.id)
          const fields = yield* validate(tenant, {
            name: payload.name ?? current.name,
            type: payload.type ?? current.type,
            enabled: payload.enabled ?? current.enabled,
            scope: payload.scope ?? current.scope,
            scope_id: payload.scope_id ?? current.scope_id,
            priority: payload.priority ?? current.priority,
            condition: payload.condition ?? current.condition,
            action: payload.action ?? current.action,
            action_config: payload.action_config ?? current.action_config
          }, payload.type !== undefined && payload.condition !== undefined)
          yield* mayChange(current, fields)
          return yield* rules.replace(tenant, params.id, fields)
        }))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          const tenant = yield* tenantOf
          yield* mayChange(yield* rules.get(tenant, params.id))
          return yield* rules.remove(tenant, params.id)
        }))
  }))

export const BudgetsHandlers = HttpApiBuilder.group(ManagementApi, "budgets", (handlers) =>
  Effect.gen(function*() {
    const rules = serviceOnTheWire(yield* Rules)
    const budgets = yield* Budgets
    return handlers.handle("list", ({ query }) =>
      Effect.gen(function*() {
        const tenant = yield* tenantOfPrincipal
        const page = yield* rules.list(
          tenant,
          {
            types: query.type === undefined ? ["budget", "user_limit"] : [query.type],
            scope: query.scope,
            scope_id: query.scope_id,
            enabled: query.enabled === undefined ? undefined : query.enabled === "true"
          },
          { limit: query.limit ?? defaultPageSize, cursor: query.cursor }
        )
        const now = DateTime.toDateUtc(yield* DateTime.now)
        return { ...page, data: yield* budgets.standing(tenant, page.data, now) }
      }))
  }))
