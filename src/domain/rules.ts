import { Schema } from "effect"

/**
 * Rules (spec §2.1). The condition's shape depends on the rule type and must match it exactly;
 * values that are well-formed but meaningless (a threshold of 0, an empty model list, a scope id
 * that names nothing) are validation errors (422), reported field by field.
 */
export const RuleType = Schema.Literals(["budget", "model_filter", "user_limit", "org_policy"])
export type RuleType = typeof RuleType.Type
export const RuleScope = Schema.Literals(["user", "team", "org", "project"])
export type RuleScope = typeof RuleScope.Type
export const RuleAction = Schema.Literals(["block", "warn", "log", "notify"])
export type RuleAction = typeof RuleAction.Type
export const Window = Schema.Literals(["daily", "monthly"])

export const BudgetCondition = Schema.Struct({
  window: Window,
  metric: Schema.Literals(["cost_usd", "tokens_in", "tokens_out", "tokens_total"]),
  threshold: Schema.Finite
})
export const ModelFilterCondition = Schema.Union([
  Schema.Struct({ model: Schema.Struct({ in: Schema.Array(Schema.String) }) }),
  Schema.Struct({ model: Schema.Struct({ not_in: Schema.Array(Schema.String) }) })
])
export const UserLimitCondition = Schema.Struct({
  window: Window,
  metric: Schema.Literals(["cost_usd", "tokens_total"]),
  per_user: Schema.Finite
})
export const OrgPolicyCondition = Schema.Struct({
  require_project_id: Schema.optional(Schema.Boolean),
  block_unknown_models: Schema.optional(Schema.Boolean)
})

export const Condition = Schema.Union([BudgetCondition, ModelFilterCondition, UserLimitCondition, OrgPolicyCondition])
  .annotate({ description: "shape depends on type: budget {window, metric, threshold}; model_filter {model: {in} | {not_in}}; user_limit {window, metric, per_user}; org_policy {require_project_id?, block_unknown_models?}" })
export type Condition = typeof Condition.Type

export const ActionConfig = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "for block: {message} shown when the tool call is aborted"
})

export const Rule = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: RuleType,
  enabled: Schema.Boolean,
  scope: RuleScope,
  scope_id: Schema.String,
  priority: Schema.Int,
  condition: Condition,
  action: RuleAction,
  action_config: ActionConfig,
  created_at: Schema.String,
  updated_at: Schema.String
})
export type Rule = typeof Rule.Type

const conditionSchemas = {
  budget: BudgetCondition,
  model_filter: ModelFilterCondition,
  user_limit: UserLimitCondition,
  org_policy: OrgPolicyCondition
} as const

const strict = { onExcessProperty: "error" } as const

/** The condition decoded for its type, or a description of how its shape is wrong (400). */
export const decodeCondition = (type: RuleType, condition: unknown): { readonly ok: Condition } | { readonly error: string } => {
  try {
    return { ok: Schema.decodeUnknownSync(conditionSchemas[type] as Schema.Codec<Condition>)(condition, strict) }
  } catch (e) {
    const detail = e instanceof Error ? e.message.replace(/\s*\n\s*/g, " ") : String(e)
    return { error: `condition does not match the ${type} shape: ${detail}` }
  }
}

/** Field-level problems with well-shaped values (422). Scope ids are checked against the store separately. */
export const semanticProblems = (rule: {
  readonly type: RuleType
  readonly condition: Condition
  readonly action: RuleAction
  readonly action_config: Readonly<Record<string, unknown>>
  readonly name: string
}): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const c = rule.condition as Record<string, unknown>
  if (rule.name.trim().length === 0) problems.push("name: must not be blank")
  if (rule.type === "budget" && !(Number(c.threshold) > 0)) problems.push("condition.threshold: must be greater than 0")
  if (rule.type === "user_limit" && !(Number(c.per_user) > 0)) problems.push("condition.per_user: must be greater than 0")
  if (rule.type === "model_filter") {
    const model = c.model as { readonly in?: ReadonlyArray<string>; readonly not_in?: ReadonlyArray<string> }
    const list = model.in ?? model.not_in ?? []
    const key = model.in ? "in" : "not_in"
    if (list.length === 0) problems.push(`condition.model.${key}: must name at least one model`)
    if (list.some((m) => m.trim().length === 0)) problems.push(`condition.model.${key}: model names must not be blank`)
  }
  if (rule.type === "org_policy" && c.require_project_id !== true && c.block_unknown_models !== true) {
    problems.push("condition: an org_policy must enable require_project_id or block_unknown_models")
  }
  if (rule.action === "block") {
    const message = rule.action_config.message
    if (typeof message !== "string" || message.trim().length === 0) {
      problems.push("action_config.message: required for block (shown when the tool call is aborted)")
    }
  }
  return problems
}
