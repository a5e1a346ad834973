import type { Environment } from "./environments.ts"
import type { SignalRecord } from "./records.ts"
import { type Usage, windowKey } from "./rule-evaluation.ts"

/**
 * Usage of the shared budget scopes (team, org, project) per calendar window. Every signal counts
 * in its org, in each team stamped on it, and in its project, for the daily and the monthly window
 * of its timestamp (in the org's time zone), whether or not a rule watches the scope yet, so a
 * budget created mid-window sees the window's usage. A partition's counts are a fold of that
 * partition's records; a scope's total is the sum over partitions (DESIGN decision 6).
 */
export type SharedScope = "team" | "org" | "project"

export interface ScopeUsageRow {
  readonly org_id: string
  readonly environment: Environment
  readonly scope: SharedScope
  readonly scope_id: string
  /** `d:YYYY-MM-DD` or `m:YYYY-MM`. */
  readonly window_key: string
  readonly partition: number
  readonly cost_usd: number
  readonly tokens_in: number
  readonly tokens_out: number
}

const sep = "\u0001"

export const windowKeyOf = (window: "daily" | "monthly", key: string) => `${window === "daily" ? "d" : "m"}:${key}`

export const scopeKey = (
  orgId: string,
  environment: Environment,
  scope: SharedScope,
  scopeId: string,
  windowKey: string
): string => `${orgId}${sep}${environment}${sep}${scope}${sep}${scopeId}${sep}${windowKey}`

export const keyOfRow = (r: Omit<ScopeUsageRow, "partition" | "cost_usd" | "tokens_in" | "tokens_out">) =>
  scopeKey(r.org_id, r.environment, r.scope, r.scope_id, r.window_key)

export const parseScopeKey = (key: string) => {
  const [org_id, environment, scope, scope_id, window_key] = key.split(sep) as [string, Environment, SharedScope, string, string]
  return { org_id, environment, scope, scope_id, window_key }
}

/** The scopes a signal counts in (beside its user). */
export const scopesOf = (r: SignalRecord): ReadonlyArray<readonly [SharedScope, string]> => {
  const scopes: Array<readonly [SharedScope, string]> = [["org", r.org_id]]
  for (const team of r.team_ids ?? []) scopes.push(["team", team])
  const project = r.metadata.project_id
  if (typeof project === "string" && project.length > 0) scopes.push(["project", project])
  return scopes
}

/** The counter keys a signal adds to: every scope × the daily and monthly window of its time. */
export const scopeKeysOf = (r: SignalRecord): ReadonlyArray<string> => {
  const date = windowKey("daily", r.ts, r.time_zone)
  const daily = windowKeyOf("daily", date)
  const monthly = windowKeyOf("monthly", date.slice(0, 7))
  return scopesOf(r).flatMap(([scope, id]) => [
    scopeKey(r.org_id, r.environment, scope, id, daily),
    scopeKey(r.org_id, r.environment, scope, id, monthly)
  ])
}

/**
 * Keeps the two most recent windows of each kind per scope, the only ones a rule can still
 * read; older counts stay in the table but leave memory.
 */
export const pruneWindows = (counts: Map<string, Usage>): void => {
  const latest = new Map<string, Array<string>>()
  for (const key of counts.keys()) {
    const cut = key.lastIndexOf(sep) + 3 // the scope and the window kind ("d:" / "m:")
    const prefix = key.slice(0, cut)
    const list = latest.get(prefix) ?? []
    list.push(key)
    latest.set(prefix, list)
  }
  for (const keys of latest.values()) {
    if (keys.length <= 2) continue
    keys.sort()
    for (const key of keys.slice(0, -2)) counts.delete(key)
  }
}
