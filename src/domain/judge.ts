import { findingKindsOf, pathsOf } from "./content-policy.ts"
import type { Environment } from "./environments.ts"
import type { SignalRecord } from "./records.ts"
import { type Crossing, evaluate, noUsage, type SignalFacts, type Usage } from "./rule-evaluation.ts"
import type { Rule } from "./rules.ts"
import { scopeKey, type SharedScope, windowKeyOf } from "./scope-usage.ts"
import { eventIdFor } from "./projection-rows.ts"
import { usageIn, type UserState } from "./user-state.ts"
import { countsAsUsage } from "./signals.ts"
import type { Verdict } from "./verdict.ts"
import { type Notice, notice } from "./notices.ts"

/** The rules in force, as the fold reads them (the engine's rule cache is one). */
export interface RuleView {
  readonly rulesFor: (orgId: string, environment: Environment) => ReadonlyArray<Rule>
  /** Whether an enabled budget rule watches this shared scope. */
  readonly watched: (orgId: string, environment: Environment, scope: SharedScope, scopeId: string) => boolean
}

const text = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null)
const count = (value: unknown): number => typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.trunc(value) : 0

/** What a signal adds to its budgets (nothing for a type that is not usage, e.g. pre-tool). */
export const usageOf = (r: SignalRecord): Usage =>
  countsAsUsage(r.type)
    ? { cost_usd: r.cost.usd, tokens_in: count(r.metadata.tokens_in), tokens_out: count(r.metadata.tokens_out) }
    : noUsage

/** What the rules judge of a signal, its event's project being `projectId`. */
export const signalFacts = (r: SignalRecord, projectId: string | null): SignalFacts => {
  const m = r.metadata
  return {
    orgId: r.org_id,
    userId: r.user_id,
    teamIds: r.team_ids ?? [],
    projectId,
    model: text(m.model),
    modelKnown: r.cost.model_known,
    ts: r.ts,
    timeZone: r.time_zone,
    usage: usageOf(r),
    toolName: text(m.tool_name),
    command: text(m.command),
    mcpServer: text(m.mcp_server),
    findingKinds: findingKindsOf(m.findings),
    paths: pathsOf(m.paths)
  }
}

/**
 * What a budget event is about: a rule's threshold in one scope and window. The threshold is part
 * of it, so a threshold raised (or lowered) after its levels were reported reports the new
 * one's levels when the counter reaches them; one set back to an earlier value reports nothing twice.
 */
export const budgetCause = (c: Crossing) => `${c.rule.id}:${c.scopeId}:${c.window}:${c.threshold}`

/** A budget level as reported once: its cause and level. */
export const crossingId = (c: Crossing) => `${budgetCause(c)}:${c.level}`

const isShared = (rule: Rule) => rule.type === "budget" && rule.scope !== "user"

/**
 * The verdict on one signal, from the rules in force and the user's usage before it, and the
 * notices its firings and threshold crossings produce (ids per firing, and per rule, scope and
 * window for crossings, so each is recorded once).
 */
export const judge = (
  rules: ReadonlyArray<Rule>,
  before: UserState,
  r: SignalRecord,
  projectId: string | null,
  sessionId: string,
  /** A shared scope's usage before this signal, by scope key (all partitions'). */
  sharedUsage: (key: string) => Usage,
  /** Whether this level was reported already (and notes it if not). */
  reported: (crossing: Crossing) => boolean
): { readonly verdict: Verdict; readonly notices: ReadonlyArray<Notice> } => {
  const facts = signalFacts(r, projectId)
  const evaluation = evaluate(rules, facts, (rule, key) => {
    const window = (rule.condition as { readonly window: "daily" | "monthly" }).window
    return isShared(rule)
      ? sharedUsage(scopeKey(r.org_id, r.environment, rule.scope as SharedScope, rule.scope_id, windowKeyOf(window, key)))
      : usageIn(before, r.environment, window, key)
  })
  const at = { org_id: r.org_id, environment: r.environment, ts: r.ts }
  const notices: Array<Notice> = [
    ...evaluation.firings.map((f) =>
      notice("rule.triggered", `${f.rule.id}:${r.signal_id}`, at, {
        rule_id: f.rule.id,
        rule_name: f.rule.name,
        action: f.action,
        user_id: r.user_id,
        model: facts.model,
        session_id: sessionId,
        event_id: eventIdFor(r.signal_id)
      })
    ),
    // Every level the counter is at and has not been reported yet: crossed by this signal,
    // by another partition's (shared scopes), or before the rule was created, enabled or lowered.
    // The event id (rule, scope, window, threshold) keeps each one once.
    ...evaluation.reached.filter((c) => !reported(c)).map((c) => {
      const condition = c.rule.condition as { readonly window: string; readonly metric: string }
      return notice(c.level === "warning" ? "budget.warning" : "budget.exceeded", budgetCause(c), at, {
        rule_id: c.rule.id,
        rule_name: c.rule.name,
        scope: c.rule.type === "budget" ? c.rule.scope : "user",
        scope_id: c.scopeId,
        threshold: c.threshold,
        // Costs are summed to the nano-dollar elsewhere; so is what the event says.
        current: condition.metric === "cost_usd" ? Math.round(c.current * 1e9) / 1e9 : c.current,
        window: condition.window,
        metric: condition.metric
      })
    })
  ]
  const decisive = evaluation.decisive
  const message = decisive?.rule.action_config.message
  const verdict: Verdict = {
    ok: evaluation.ok,
    signal_id: r.signal_id,
    session_id: sessionId,
    ...(decisive ? { action: decisive.action, rule_id: decisive.rule.id } : {}),
    ...(decisive && typeof message === "string" ? { message } : {})
  }
  return { verdict, notices }
}
