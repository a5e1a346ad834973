import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { NotFound, Unprocessable } from "../../domain/errors.ts"
import { BudgetStatus } from "../../domain/budgets.ts"
import { ActionConfig, conditionSchemas, Rule, RuleAction, RuleScope, RuleType } from "../../domain/rules.ts"
import { getEndpoint, IdParams, listEndpoint, managementGroup, Name, requires } from "./endpoints.ts"
import { BooleanParam } from "../query.ts"

const Priority = Schema.Int.pipe(Schema.check(Schema.isBetween({ minimum: -1_000_000, maximum: 1_000_000 })))
  .annotate({ description: "lower runs first; ties: older rule first (default 100)" })
const ScopeId = Schema.String.annotate({
  description: "the id of the user, team or org; for project scope the project_id signals carry (1 to 200 characters), " +
    "registered with POST /projects or not"
})
const ConditionInput = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "must match the shape of the rule type exactly (unknown keys are rejected): " +
    "budget {window: daily|monthly, metric: cost_usd|tokens_in|tokens_out|tokens_total, threshold}; " +
    "model_filter {model: {in: [..]}} (blocklist) or {model: {not_in: [..]}} (allowlist), " +
    "a listed name also naming its dated releases (claude-sonnet-4 holds claude-sonnet-4-20250514, not gpt-4o-mini for gpt-4o); " +
    "user_limit {window, metric: cost_usd|tokens_total, per_user}; " +
    "org_policy {require_project_id?: boolean, block_unknown_models?: boolean, blocked_tools?: [..], " +
    "blocked_commands?: [..], blocked_mcp_servers?: [..]}, enabling at least one (each list 1 to 100 non-blank entries " +
    "of at most 200 characters): blocked_tools matches metadata.tool_name case-insensitively, whole name, * a wildcard " +
    "(mcp__*); blocked_commands matches metadata.command where the pattern occurs anywhere in it, * any run of " +
    "characters, runs of whitespace equal (rm -rf matches sudo rm  -rf /tmp/x); blocked_mcp_servers matches " +
    "metadata.mcp_server case-insensitively; secret_kinds (extension) names finding kinds (* any) matched against the kinds of " +
    "metadata.findings; protected_paths (extension) names globs (**/.env, ~/.ssh/*) matched against metadata.paths; " +
    "custom_patterns (extension) [{kind, pattern}], at most 20 RE2 patterns of 200 characters, matched by the adapters " +
    "(a match is a finding of kind, which the rule acts on); refused (422) when RE2 cannot take one, it is large or it matches the empty string"
})

/** A schema's JSON Schema with every object closed, as the strict decoding of conditions is. */
const closed = (schema: Schema.Top): unknown => {
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close)
    if (typeof node !== "object" || node === null) return node
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(node)) out[k] = close(v)
    if (out.type === "object" && "properties" in out) out.additionalProperties = false
    return out
  }
  return close(Schema.toJsonSchemaDocument(schema).schema)
}

/**
 * The create body's condition depends on its type; the document says so (a rule body of each
 * type with its condition's shape), so that a body valid by it has a condition of the right
 * shape. The handler still decodes the condition for the type (400 invalid_condition).
 */
const conditionForType = Schema.makeFilter((_: unknown) => true, {
  toJsonSchema: () => ({
    anyOf: Object.entries(conditionSchemas).map(([type, schema]) => ({
      properties: { type: { const: type }, condition: closed(schema) }
    }))
  })
})

/** An update naming both a type and a condition: the condition has that type's shape. */
const conditionForTypeWhenBoth = Schema.makeFilter((_: unknown) => true, {
  toJsonSchema: () => ({
    anyOf: [
      { not: { required: ["type", "condition"] } },
      ...Object.entries(conditionSchemas).map(([type, schema]) => ({
        properties: { type: { const: type }, condition: closed(schema) }
      }))
    ]
  })
})

/** The filters of the rule lists (rules, budgets) besides their type. */
const ruleFilters = {
  scope: Schema.optional(RuleScope),
  scope_id: Schema.optional(Schema.String),
  enabled: Schema.optional(BooleanParam)
}

export class RulesGroup extends HttpApiGroup.make("rules")
  .add(
    listEndpoint("/rules", Rule, { type: Schema.optional(RuleType), ...ruleFilters }).annotateMerge(requires("rules", "read")),
    getEndpoint("/rules/:id", Rule).annotateMerge(requires("rules", "read")),
    HttpApiEndpoint.post("create", "/rules", {
      payload: Schema.Struct({
        name: Name,
        type: RuleType,
        scope: RuleScope,
        scope_id: ScopeId,
        priority: Schema.optionalKey(Priority),
        condition: ConditionInput,
        action: RuleAction,
        action_config: Schema.optionalKey(ActionConfig),
        enabled: Schema.optionalKey(Schema.Boolean)
      }).pipe(Schema.check(conditionForTypeWhenBoth)).pipe(Schema.check(conditionForType)),
      success: Rule.pipe(HttpApiSchema.status(201)),
      error: Unprocessable
    }).annotateMerge(requires("rules", "write")),
    HttpApiEndpoint.put("update", "/rules/:id", {
      params: IdParams,
      payload: Schema.Struct({
        name: Schema.optionalKey(Name),
        type: Schema.optionalKey(RuleType),
        scope: Schema.optionalKey(RuleScope),
        scope_id: Schema.optionalKey(ScopeId),
        priority: Schema.optionalKey(Priority),
        condition: Schema.optionalKey(ConditionInput),
        action: Schema.optionalKey(RuleAction),
        action_config: Schema.optionalKey(ActionConfig),
        enabled: Schema.optionalKey(Schema.Boolean)
      }).pipe(Schema.check(conditionForTypeWhenBoth))
        .annotate({ description: "only the fields sent change; the result must still be a valid rule" }),
      success: Rule,
      error: [NotFound, Unprocessable]
    }).annotateMerge(requires("rules", "write")),
    HttpApiEndpoint.delete("remove", "/rules/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: NotFound })
      .annotateMerge(requires("rules", "write"))
  )
  .pipe(managementGroup({
    title: "Rules",
    description: "Policies evaluated on every signal: budgets, model filters, per-user limits, org policies"
  }))
{}

export class BudgetsGroup extends HttpApiGroup.make("budgets")
  .add(
    listEndpoint("/budgets", BudgetStatus, { type: Schema.optional(Schema.Literals(["budget", "user_limit"])), ...ruleFilters })
      .annotateMerge(requires("rules", "read"))
  )
  .pipe(managementGroup({
    title: "Budgets",
    description: "Where each budget and per-user limit (rules of type budget and user_limit) stands in its current window, " +
      "in the order and pages of the rules list"
  }))
{}
