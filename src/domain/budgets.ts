import { Schema } from "effect"
import { type Metric, metricOf, type Usage, warningRatio } from "./rule-evaluation.ts"
import { type Rule, RuleAction, RuleScope, Window } from "./rules.ts"
import { Timestamp } from "./tenancy.ts"

/**
 * Where each budget and per-user limit stands in its current window: the figure its rule compares
 * with its limit on the next signal. A budget's is its scope's usage (the user's own for a user
 * scope); a per-user limit's is the highest of one user's own usage among the users it covers.
 */
export const BudgetState = Schema.Literals(["ok", "warning", "exceeded"])
export type BudgetState = typeof BudgetState.Type

export const BudgetStatus = Schema.Struct({
  rule_id: Schema.String,
  name: Schema.String,
  type: Schema.Literals(["budget", "user_limit"]),
  enabled: Schema.Boolean,
  action: RuleAction,
  scope: RuleScope,
  scope_id: Schema.String,
  window: Window,
  metric: Schema.Literals(["cost_usd", "tokens_in", "tokens_out", "tokens_total"]),
  limit: Schema.Finite.annotate({ description: "the budget's threshold, or the limit's per_user" }),
  window_start: Timestamp.annotate({ description: "the current window's start (local midnight, or the 1st, in the org's time zone)" }),
  window_end: Timestamp.annotate({ description: "the current window's end: the next window's start" }),
  current: Schema.Finite.annotate({
    description: "the metric so far in the window: a budget's scope's usage (the user's own for a user scope); " +
      "for a user_limit, the highest usage of one user it covers"
  }),
  percent: Schema.Finite.annotate({ description: "current / limit, in percent, to one decimal" }),
  state: BudgetState.annotate({
    description: "`exceeded` from the limit on (the rule acts on further signals), `warning` from 80%, else `ok`"
  }),
  users_warning: Schema.optionalKey(Schema.Int.annotate({ description: "user_limit: users at 80% or more, under the limit" })),
  users_exceeded: Schema.optionalKey(Schema.Int.annotate({ description: "user_limit: users at or over the limit" })),
  top_user_id: Schema.optionalKey(
    Schema.NullOr(Schema.String).annotate({
      description: "user_limit: the user with the highest usage (null when none has any in the window)"
    })
  )
}).annotate({ identifier: "BudgetStatus" })
export type BudgetStatus = typeof BudgetStatus.Type

export const stateOf = (current: number, limit: number): BudgetState => current >= limit ? "exceeded" : current >= limit * warningRatio ? "warning" : "ok"

/** current / limit in percent, one decimal. */
export const percentOf = (current: number, limit: number): number => Math.round((current / limit) * 1000) / 10

/** The figure a rule compares, from a usage; a dollar figure kept to nano-dollars as summed. */
export const figureOf = (usage: Usage, metric: Metric): number => {
  const value = metricOf(usage, metric)
  return metric === "cost_usd" ? Math.round(value * 1e9) / 1e9 : value
}

/**
 * A per-user limit's standing from the users' own usage: the highest one decides `current`, ties
 * going to the smaller user id, so the answer does not depend on the order rows come in.
 */
export const perUserStanding = (users: ReadonlyArray<{ readonly user_id: string; readonly value: number }>, limit: number) => {
  let top: { readonly user_id: string; readonly value: number } | undefined
  let warning = 0
  let exceeded = 0
  for (const u of users) {
    const state = stateOf(u.value, limit)
    if (state === "exceeded") exceeded += 1
    else if (state === "warning") warning += 1
    if (u.value > 0 && (top === undefined || u.value > top.value || (u.value === top.value && u.user_id < top.user_id))) top = u
  }
  return { current: top?.value ?? 0, top_user_id: top?.user_id ?? null, users_warning: warning, users_exceeded: exceeded }
}

/** One user's own usage in a window, as their actor's state holds it. */
export interface UserUsage {
  readonly user_id: string
  readonly usage: Usage
}

/**
 * The standing of a budget or a per-user limit in its current window (`start`, `end`): a budget's
 * from its scope's usage (`scope`: the user's own for a user scope), a per-user limit's from the
 * own usage of each user it covers (`users`: those with any in the window).
 */
export const standingOf = (
  rule: Rule & { readonly type: "budget" | "user_limit" },
  window: { readonly start: string; readonly end: string },
  usage: { readonly scope: Usage } | { readonly users: ReadonlyArray<UserUsage> }
): BudgetStatus => {
  const c = rule.condition as { readonly window: "daily" | "monthly"; readonly metric: Metric; readonly threshold?: number; readonly per_user?: number }
  const limit = Number(rule.type === "budget" ? c.threshold : c.per_user)
  const base = {
    rule_id: rule.id,
    name: rule.name,
    type: rule.type,
    enabled: rule.enabled,
    action: rule.action,
    scope: rule.scope,
    scope_id: rule.scope_id,
    window: c.window,
    metric: c.metric,
    limit,
    window_start: window.start,
    window_end: window.end
  }
  if ("scope" in usage) {
    const current = figureOf(usage.scope, c.metric)
    return { ...base, current, percent: percentOf(current, limit), state: stateOf(current, limit) }
  }
  const s = perUserStanding(usage.users.map((u) => ({ user_id: u.user_id, value: figureOf(u.usage, c.metric) })), limit)
  return {
    ...base,
    current: s.current,
    percent: percentOf(s.current, limit),
    state: stateOf(s.current, limit),
    users_warning: s.users_warning,
    users_exceeded: s.users_exceeded,
    top_user_id: s.top_user_id
  }
}
