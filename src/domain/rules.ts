import { Schema } from "effect"
import { findingKind, globProblem, maxCustomPatterns, maxPatternLength, patternProblem } from "./content-policy.ts"
import { NotFoundRefusal, Refusal } from "./refusal.ts"

/**
 * Rules (spec §2.1). The condition's shape depends on the rule type and must match it exactly;
 * values that are well-formed but meaningless (a threshold of 0, an empty model list, a scope id
 * that names nothing) are validation errors (422), reported field by field.
 */
export const RuleType = Schema.Literals(["budget", "model_filter", "user_limit", "org_policy"])
export type RuleType = typeof RuleType.Type
export const RuleScope = Schema.Literals(["user", "team", "org", "project"])
export type RuleScope = typeof RuleScope.Type
export const RuleAction = Schema.Literals(["block", "warn", "log", "notify", "redact"]).annotate({
  description: "redact (extension): on an org_policy with secret_kinds or custom_patterns only; the verdict is ok: false, " +
    "and the adapter runs the tool call with the secrets found replaced where the tool lets a hook rewrite its input, else blocks"
})
export type RuleAction = typeof RuleAction.Type
export const Window = Schema.Literals(["daily", "monthly"])

/**
 * Bounds of a condition's values, far above any real use: they keep what an admin can store (and
 * every signal then evaluates) small, and every threshold a finite number the counters can reach.
 */
export const maxThreshold = 1e15
export const maxModels = 1_000
export const maxModelNameLength = 200
/** The longest message a rule's action_config may carry (shown to the developer), and its whole size. */
export const maxMessageLength = 2_000
export const maxActionConfigBytes = 8_192

const limit = Schema.Finite.pipe(Schema.check(Schema.isLessThanOrEqualTo(maxThreshold)))
const Models = Schema.Array(Schema.String.pipe(Schema.check(Schema.isMaxLength(maxModelNameLength))))
  .pipe(Schema.check(Schema.isMaxLength(maxModels)))

export const BudgetCondition = Schema.Struct({
  window: Window,
  metric: Schema.Literals(["cost_usd", "tokens_in", "tokens_out", "tokens_total"]),
  threshold: limit
})
export const ModelFilterCondition = Schema.Union([
  Schema.Struct({ model: Schema.Struct({ in: Models }) }),
  Schema.Struct({ model: Schema.Struct({ not_in: Models }) })
])
export const UserLimitCondition = Schema.Struct({
  window: Window,
  metric: Schema.Literals(["cost_usd", "tokens_total"]),
  per_user: limit
})
/** Most entries one list of an org_policy may have, and the longest entry. */
export const maxPolicyEntries = 100
export const maxPolicyEntryLength = 200

export const OrgPolicyCondition = Schema.Struct({
  require_project_id: Schema.optionalKey(Schema.Boolean),
  block_unknown_models: Schema.optionalKey(Schema.Boolean),
  blocked_tools: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "tool names matched case-insensitively against metadata.tool_name, whole name; * matches any run of characters (\"mcp__*\")"
    })
  ),
  blocked_commands: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "shell-command patterns matched against metadata.command: a pattern matches where it occurs anywhere in the " +
        "command, * matches any run of characters, runs of whitespace compare equal (\"rm -rf\" matches \"sudo rm  -rf /tmp/x\")"
    })
  ),
  blocked_mcp_servers: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "MCP server names matched case-insensitively against metadata.mcp_server"
    })
  ),
  secret_kinds: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "finding kinds (aws_access_token, github_pat, private_key, generic_api_key, …; * any kind) matched " +
        "against the kinds of metadata.findings: what the adapter found in a prompt, a tool's input or its output"
    })
  ),
  protected_paths: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "glob patterns (**/.env, ~/.ssh/*, **/*.pem) matched against metadata.paths, the files a tool call names " +
        "(absolute, the user's home as ~)"
    })
  ),
  custom_patterns: Schema.optionalKey(
    Schema.Array(Schema.Struct({ kind: Schema.String, pattern: Schema.String })).annotate({
      description: "the org's own patterns (RE2 syntax, at most 20 of 200 characters), matched by the adapters on the developer's " +
        "machine (GET /engine/v1/content-policy): a match is a finding of `kind`, which this rule acts on"
    })
  )
})

export const Condition = Schema.Union([BudgetCondition, ModelFilterCondition, UserLimitCondition, OrgPolicyCondition])
  .annotate({
    description: "shape depends on type: budget {window, metric, threshold}; model_filter {model: {in} | {not_in}}; " +
      "user_limit {window, metric, per_user}; org_policy {require_project_id?, block_unknown_models?, blocked_tools?, " +
      "blocked_commands?, blocked_mcp_servers?, secret_kinds?, protected_paths?} (at least one enabled; the lists match " +
      "metadata.tool_name, metadata.command, metadata.mcp_server, the kinds of metadata.findings and metadata.paths of " +
      "any signal carrying them, in practice user-prompt, pre-tool and post-tool)"
  })
export type Condition = typeof Condition.Type

export const ActionConfig = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "{message}: required for block (shown when the tool call is aborted); optional for warn, log and notify " +
    "(the verdict carries it for the adapter to show). {channels}: notify only, the notification channels (ch_… of the " +
    "rule's org and environment; unknown ids are 422) that get a message when the rule fires, coalesced per user and " +
    "the channel's coalesce_seconds"
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

export const conditionSchemas = {
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
  if (rule.type === "org_policy") {
    const lists = ["blocked_tools", "blocked_commands", "blocked_mcp_servers", "secret_kinds", "protected_paths", "custom_patterns"] as const
    if (c.require_project_id !== true && c.block_unknown_models !== true && lists.every((k) => c[k] === undefined)) {
      problems.push(
        "condition: an org_policy must enable require_project_id or block_unknown_models, or name blocked_tools, blocked_commands, " +
          "blocked_mcp_servers, secret_kinds, protected_paths or custom_patterns"
      )
    }
    problems.push(...contentProblems(c))
    for (const key of lists) {
      if (key === "custom_patterns") continue
      const list = c[key] as ReadonlyArray<string> | undefined
      if (list === undefined) continue
      if (list.length === 0) problems.push(`condition.${key}: must name at least one entry (leave it out instead)`)
      if (list.length > maxPolicyEntries) problems.push(`condition.${key}: at most ${maxPolicyEntries} entries`)
      if (list.some((e) => e.trim().length === 0)) problems.push(`condition.${key}: entries must not be blank`)
      else if ((key === "blocked_tools" || key === "blocked_commands") && list.some((e) => e.replaceAll("*", "").trim().length === 0)) {
        problems.push(`condition.${key}: an entry must have more than * and spaces (it would match everything)`)
      }
      if (list.some((e) => e.length > maxPolicyEntryLength)) problems.push(`condition.${key}: entries are at most ${maxPolicyEntryLength} characters`)
    }
  }
  const message = rule.action_config.message
  if (typeof message === "string" && message.length > maxMessageLength) {
    problems.push(`action_config.message: at most ${maxMessageLength} characters`)
  }
  if (new TextEncoder().encode(JSON.stringify(rule.action_config)).length > maxActionConfigBytes) {
    problems.push(`action_config: at most ${maxActionConfigBytes} bytes of JSON`)
  }
  // Redact takes findings out of a tool's input: a rule that can produce none has nothing to redact.
  if (rule.action === "redact" && (rule.type !== "org_policy" || (c.secret_kinds === undefined && c.custom_patterns === undefined))) {
    problems.push("action: redact is for an org_policy naming secret_kinds or custom_patterns (it takes the secrets found out)")
  }
  if (rule.action === "block") {
    if (typeof message !== "string" || message.trim().length === 0) {
      problems.push("action_config.message: required for block (shown when the tool call is aborted)")
    }
  }
  return problems
}

/** The content lists of an org_policy: kinds as the adapters name them, globs Node can match. */
const contentProblems = (c: Record<string, unknown>): Array<string> => {
  const problems: Array<string> = []
  const kinds = c.secret_kinds as ReadonlyArray<string> | undefined
  const bad = kinds?.find((k) => k.trim().length > 0 && !findingKind.test(k))
  if (bad !== undefined) {
    problems.push(`condition.secret_kinds: ${JSON.stringify(bad.slice(0, 100))} is not a finding kind (lowercase letters, digits and _, or *)`)
  }
  const patterns = c.custom_patterns as ReadonlyArray<{ readonly kind: string; readonly pattern: string }> | undefined
  if (patterns !== undefined) {
    if (patterns.length === 0) problems.push("condition.custom_patterns: must name at least one pattern (leave it out instead)")
    if (patterns.length > maxCustomPatterns) problems.push(`condition.custom_patterns: at most ${maxCustomPatterns} patterns`)
    for (const [i, p] of patterns.slice(0, maxCustomPatterns).entries()) {
      if (!findingKind.test(p.kind) || p.kind === "*") problems.push(`condition.custom_patterns[${i}].kind: lowercase letters, digits and _`)
      if (p.pattern.length === 0 || p.pattern.length > maxPatternLength) {
        problems.push(`condition.custom_patterns[${i}].pattern: 1 to ${maxPatternLength} characters`)
        continue
      }
      const why = patternProblem(p.pattern)
      if (why) problems.push(`condition.custom_patterns[${i}].pattern: refused: ${why}`)
    }
  }
  for (const glob of (c.protected_paths as ReadonlyArray<string> | undefined) ?? []) {
    if (glob.trim().length === 0 || glob.length > maxPolicyEntryLength) continue
    const why = globProblem(glob)
    if (why) {
      problems.push(`condition.protected_paths: ${JSON.stringify(glob)}: ${why}`)
      break
    }
  }
  return problems
}

export class RuleNotFound extends NotFoundRefusal("RuleNotFound", "rule") {}

/** A rule scoped to a team that is not (or no longer) of the org. */
export class RuleTeamMissing extends Refusal("RuleTeamMissing", 422, "validation_error") {
  constructor(teamId: string) {
    super(`scope_id: no team ${teamId} in this org`)
  }
}
