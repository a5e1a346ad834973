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

/**
 * The channel a commit announces the counts it wrote for watched scopes on (NOTIFY, delivered
 * when the commit is), so other nodes add them at once.
 */
export const scopeUsageChannel = "signal_engine_scope_usage"
/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more: announcements are cut below it. */
const maxPayload = 7_500

type Announced = readonly [string, Environment, SharedScope, string, string, number, number, number, number]

/** The NOTIFY payloads that announce these rows (absolute counts per partition). */
export const announcementsOf = (rows: ReadonlyArray<ScopeUsageRow>): ReadonlyArray<string> => {
  if (rows.length === 0) return []
  const payloads: Array<string> = []
  let chunk: Array<string> = []
  let size = 2
  for (const r of rows) {
    const item = JSON.stringify([r.org_id, r.environment, r.scope, r.scope_id, r.window_key, r.partition, r.cost_usd, r.tokens_in, r.tokens_out])
    const bytes = Buffer.byteLength(item) + 1
    if (chunk.length > 0 && size + bytes > maxPayload) {
      payloads.push(`[${chunk.join(",")}]`)
      chunk = []
      size = 2
    }
    chunk.push(item)
    size += bytes
  }
  payloads.push(`[${chunk.join(",")}]`)
  return payloads
}

/** The rows an announcement carries. */
export const announcedRows = (payload: string): ReadonlyArray<ScopeUsageRow> =>
  (JSON.parse(payload) as ReadonlyArray<Announced>).map((
    [org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out]
  ) => ({ org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out }))

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

/**
 * The scopes a signal counts in (beside its user). `project` is the signal's project as its event
 * has it: its own `metadata.project_id`, else its session's (the fold decides).
 */
export const scopesOf = (r: SignalRecord, project: string | null): ReadonlyArray<readonly [SharedScope, string]> => {
  const scopes: Array<readonly [SharedScope, string]> = [["org", r.org_id]]
  for (const team of r.team_ids ?? []) scopes.push(["team", team])
  if (project !== null && project.length > 0) scopes.push(["project", project])
  return scopes
}

/** The counter keys a signal adds to: every scope × the daily and monthly window of its time. */
export const scopeKeysOf = (r: SignalRecord, project: string | null): ReadonlyArray<string> => {
  const date = windowKey("daily", r.ts, r.time_zone)
  const daily = windowKeyOf("daily", date)
  const monthly = windowKeyOf("monthly", date.slice(0, 7))
  const keys: Array<string> = []
  for (const [scope, id] of scopesOf(r, project)) {
    keys.push(scopeKey(r.org_id, r.environment, scope, id, daily), scopeKey(r.org_id, r.environment, scope, id, monthly))
  }
  return keys
}

interface KeysMemo {
  readonly stamp: string
  readonly org_id: string
  readonly environment: Environment
  readonly time_zone: string | undefined
  readonly team_ids: ReadonlyArray<string> | undefined
  readonly project: string | null
  readonly keys: ReadonlyArray<string>
}

const sameTeams = (a: ReadonlyArray<string> | undefined, b: ReadonlyArray<string> | undefined) =>
  a === b || (a !== undefined && b !== undefined && a.length === b.length && a.every((t, i) => t === b[i]))

/**
 * The part of a UTC timestamp (`toISOString`'s form) within which the signal's windows cannot
 * change: its date in UTC, its minute when the org has a time zone (a zone's midnight falls on a
 * whole minute of UTC). Undefined for other forms.
 */
const stampOf = (r: SignalRecord): string | undefined =>
  r.ts.length !== 24 || r.ts.charCodeAt(23) !== 90 /* Z */
    ? undefined
    : r.time_zone === undefined || r.time_zone === "UTC"
    ? r.ts.slice(0, 10)
    : r.ts.slice(0, 16)

/**
 * `scopeKeysOf` that remembers each user's last keys: a user's next signal nearly always counts
 * in the same scopes and windows, and handing back the same strings (their hashes kept) makes the
 * counters' map lookups cheap. A memory is used while the signal's org, environment, time zone,
 * teams, project and window stamp are those it was made for. `forget` drops a user's (evicted).
 */
export const makeScopeKeys = () => {
  const memos = new Map<string, KeysMemo>()
  const keysOf = (r: SignalRecord, project: string | null): ReadonlyArray<string> => {
    const stamp = stampOf(r)
    if (stamp === undefined) return scopeKeysOf(r, project)
    const memo = memos.get(r.user_id)
    if (
      memo !== undefined && memo.stamp === stamp && memo.org_id === r.org_id && memo.environment === r.environment &&
      memo.time_zone === r.time_zone && memo.project === project && sameTeams(memo.team_ids, r.team_ids)
    ) return memo.keys
    const keys = scopeKeysOf(r, project)
    memos.set(r.user_id, {
      stamp,
      org_id: r.org_id,
      environment: r.environment,
      time_zone: r.time_zone,
      team_ids: r.team_ids,
      project,
      keys
    })
    return keys
  }
  return { keysOf, forget: (userId: string) => void memos.delete(userId), clear: () => memos.clear() }
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
