import type { Rule, RuleAction } from "./rules.ts"
import { kindsActedOn, kindsMatch, pathsMatch } from "./content-policy.ts"
import { toolPolicyOf } from "./tool-policy.ts"

/**
 * Rule evaluation for one signal: pure, over the rules in force and the usage before the signal.
 * Rules apply by scope (the user; a team the user is in; the user's org; the signal's project) and
 * are evaluated in ascending priority, older first on ties. Every matching rule takes its action;
 * the first matching block decides the verdict and supplies its message.
 */
export type Metric = "cost_usd" | "tokens_in" | "tokens_out" | "tokens_total"

export interface Usage {
  readonly cost_usd: number
  readonly tokens_in: number
  readonly tokens_out: number
}

export const noUsage: Usage = { cost_usd: 0, tokens_in: 0, tokens_out: 0 }

/** Dollar sums are kept to nano-dollars, so adding many small costs does not drift. */
const sumUsd = (a: number, b: number) => Math.round((a + b) * 1e9) / 1e9

export const addUsage = (a: Usage, b: Usage): Usage => ({
  cost_usd: sumUsd(a.cost_usd, b.cost_usd),
  tokens_in: a.tokens_in + b.tokens_in,
  tokens_out: a.tokens_out + b.tokens_out
})

export type MutableUsage = { -readonly [K in keyof Usage]: Usage[K] }

/** `addUsage` into `target` itself (the same sums), for counts their owner adds to in place. */
export const addUsageInto = (target: MutableUsage, b: Usage): void => {
  target.cost_usd = sumUsd(target.cost_usd, b.cost_usd)
  target.tokens_in += b.tokens_in
  target.tokens_out += b.tokens_out
}

export const metricOf = (usage: Usage, metric: Metric): number => metric === "tokens_total" ? usage.tokens_in + usage.tokens_out : usage[metric]

const localDates = new Map<string, Intl.DateTimeFormat>()

/** The calendar date (YYYY-MM-DD) of an instant in a time zone; UTC without formatting. */
export const localDate = (ts: string, timeZone: string | undefined): string => {
  // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: a short cut; Intl gives the same UTC date
  if (timeZone === undefined || timeZone === "UTC") return ts.slice(0, 10)
  let format = localDates.get(timeZone)
  // Stryker disable next-line ConditionalExpression: the cache only saves building a formatter
  if (format === undefined) {
    // en-CA formats dates as YYYY-MM-DD.
    format = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    // Stryker disable next-line all: the cache only saves building a formatter
    localDates.set(timeZone, format)
  }
  return format.format(new Date(ts))
}

/**
 * Calendar windows: `2026-11-22` (daily, from 00:00) and `2026-11` (monthly, from the 1st), in
 * the org's time zone (UTC unless it set one), as stamped on the record.
 */
export const windowKey = (window: "daily" | "monthly", ts: string, timeZone?: string): string => {
  const date = localDate(ts, timeZone)
  return window === "daily" ? date : date.slice(0, 7)
}

export interface SignalFacts {
  readonly orgId: string
  readonly userId: string
  readonly teamIds: ReadonlyArray<string>
  readonly projectId: string | null
  readonly model: string | null
  readonly modelKnown: boolean
  readonly ts: string
  /** The org's time zone for calendar windows, as stamped on the record. */
  readonly timeZone?: string | undefined
  /** What this signal adds to every counter it falls in. */
  readonly usage: Usage
  /** metadata.tool_name, metadata.command and metadata.mcp_server, where the signal carries them (org_policy lists). */
  readonly toolName?: string | null | undefined
  readonly command?: string | null | undefined
  readonly mcpServer?: string | null | undefined
  /** The kinds of metadata.findings and metadata.paths (org_policy secret_kinds, protected_paths). */
  readonly findingKinds?: ReadonlyArray<string> | undefined
  readonly paths?: ReadonlyArray<string> | undefined
}

/** Whether an org_policy condition blocks this signal: stateless, so it can be judged anywhere. */
export const policyMatches = (c: Readonly<Record<string, unknown>>, facts: SignalFacts, projectKnown = true): boolean => {
  if (c.require_project_id === true && facts.projectId === null && projectKnown) return true
  if (c.block_unknown_models === true && facts.model !== null && !facts.modelKnown) return true
  if (kindsMatch(kindsActedOn(c), facts.findingKinds ?? [])) return true
  if (pathsMatch(c.protected_paths as ReadonlyArray<string> | undefined, facts.paths ?? [])) return true
  if (c.blocked_tools === undefined && c.blocked_commands === undefined && c.blocked_mcp_servers === undefined) return false
  const policy = toolPolicyOf(c)
  return (facts.toolName != null && policy.tool(facts.toolName)) ||
    (facts.command != null && policy.command(facts.command)) ||
    (facts.mcpServer != null && policy.mcpServer(facts.mcpServer))
}

export const appliesTo = (rule: Rule, facts: SignalFacts): boolean => {
  switch (rule.scope) {
    case "user":
      return rule.scope_id === facts.userId
    case "team":
      return facts.teamIds.includes(rule.scope_id)
    case "org":
      return rule.scope_id === facts.orgId
    case "project":
      return rule.scope_id === facts.projectId
  }
}

/** Rules in evaluation order: ascending priority, then older first, then id. */
export const evaluationOrder = (rules: ReadonlyArray<Rule>): ReadonlyArray<Rule> =>
  [...rules].sort((a, b) => a.priority - b.priority || a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id))

/** A threshold crossed by this signal: each fires once per rule, scope and window. */
export interface Crossing {
  readonly rule: Rule
  readonly level: "warning" | "exceeded"
  readonly scopeId: string
  readonly window: string
  readonly threshold: number
  readonly current: number
}

export interface Firing {
  readonly rule: Rule
  readonly action: RuleAction
}

export interface Evaluation {
  readonly ok: boolean
  /** The rule that decides the answer: the first block, else the first redact, else the first rule that fired. */
  readonly decisive: Firing | undefined
  readonly firings: ReadonlyArray<Firing>
  readonly crossings: ReadonlyArray<Crossing>
  /**
   * Every budget level (80%, 100%) at or above the counter after this signal, crossed now or
   * before: what the worker reports, if it has not yet. Before, because a shared scope's counter
   * also grows by other partitions' usage (learnt late), and because a rule created, enabled or
   * lowered below what was spent has no signal that crosses it. The event id, per rule, scope
   * and window, makes each one once. (`crossings` is the part this signal itself crossed.)
   */
  readonly reached: ReadonlyArray<Crossing>
}

/** Usage in a rule's counter before this signal: the scope's for budgets, the user's own for user limits. */
export type UsageBefore = (rule: Rule, windowKey: string) => Usage

export const warningRatio = 0.8

/**
 * What follows a model name in one of its dated releases: `-20250514` (Anthropic), `-2024-08-06`
 * or `-0613` (OpenAI), `@20240620` (Vertex AI), `-latest`, each optionally followed by a further
 * tag (`-preview`, `-v1:0`). Sizes and variants (`-mini`, `-405b`, `-5-sonnet`) are not releases.
 */
const releaseSuffix = /^(?:[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{4})|-latest)(?:[-:.].*)?$/

/**
 * Whether a model filter's list names this model: the name itself, or a release of it (a list
 * naming `claude-sonnet-4` holds `claude-sonnet-4-20250514`, one naming `gpt-4o` holds
 * `gpt-4o-2024-08-06` but not `gpt-4o-mini`). A listed dated id names that release only.
 */
export const listsModel = (list: ReadonlyArray<string>, model: string): boolean => {
  for (const name of list) {
    if (model === name) return true
    if (model.length > name.length && model.startsWith(name) && releaseSuffix.test(model.slice(name.length))) return true
  }
  return false
}

const filterMatches = (c: Readonly<Record<string, unknown>>, model: string | null): boolean => {
  if (model === null) return false
  const list = c.model as { readonly in?: ReadonlyArray<string>; readonly not_in?: ReadonlyArray<string> }
  return list.in ? listsModel(list.in, model) : !listsModel(list.not_in ?? [], model)
}

/**
 * The first blocking rule (a block, else a redact) among those that need no per-user state (model_filter, org_policy),
 * judged from the signal alone, as any node can at acceptance (DESIGN decision 8): what a signal
 * whose actor did not answer in time is answered, so an unowned or slow partition never turns a
 * block into an allow. The signal's own project_id stands for its event's, and require_project_id
 * is not judged on a signal naming none (its session may name one).
 */
export const statelessBlock = (rules: ReadonlyArray<Rule>, facts: SignalFacts): Rule | undefined =>
  firstStop(rules, facts, "block") ?? firstStop(rules, facts, "redact")

const firstStop = (rules: ReadonlyArray<Rule>, facts: SignalFacts, action: RuleAction): Rule | undefined => {
  for (const rule of rules) {
    if (!rule.enabled || rule.action !== action || !appliesTo(rule, facts)) continue
    const c = rule.condition as Record<string, unknown>
    if (rule.type === "model_filter" ? filterMatches(c, facts.model) : rule.type === "org_policy" && policyMatches(c, facts, false)) {
      return rule
    }
  }
  return undefined
}

export const evaluate = (rules: ReadonlyArray<Rule>, facts: SignalFacts, usageBefore: UsageBefore): Evaluation => {
  const firings: Array<Firing> = []
  const crossings: Array<Crossing> = []
  const reached: Array<Crossing> = []
  for (const rule of rules) {
    if (!rule.enabled || !appliesTo(rule, facts)) continue
    const c = rule.condition as Record<string, unknown>
    let matched = false
    switch (rule.type) {
      case "model_filter": {
        matched = filterMatches(c, facts.model)
        break
      }
      case "org_policy": {
        matched = policyMatches(c, facts)
        break
      }
      case "budget":
      case "user_limit": {
        const window = windowKey(c.window as "daily" | "monthly", facts.ts, facts.timeZone)
        const metric = c.metric as Metric
        const threshold = Number(rule.type === "budget" ? c.threshold : c.per_user)
        const before = metricOf(usageBefore(rule, window), metric)
        const after = before + metricOf(facts.usage, metric)
        const scopeId = rule.type === "budget" ? rule.scope_id : facts.userId
        // Usage that happened, happened: the signal that reaches the limit is counted and let
        // through; the rule then acts on every further signal in scope until the window resets.
        matched = before >= threshold
        for (const [level, at] of [["warning", threshold * warningRatio], ["exceeded", threshold]] as const) {
          if (after < at) continue
          const crossing = { rule, level, scopeId, window, threshold, current: after }
          reached.push(crossing)
          if (before < at) crossings.push(crossing)
        }
        break
      }
    }
    if (matched) firings.push({ rule, action: rule.action })
  }
  // A redact stops the signal as it was sent (the adapter sends the tool a rewritten input or
  // blocks), so it answers ok: false like a block, which an adapter unaware of redact enforces.
  const stop = firings.find((f) => f.action === "block") ?? firings.find((f) => f.action === "redact")
  return { ok: stop === undefined, decisive: stop ?? firings[0], firings, crossings, reached }
}
