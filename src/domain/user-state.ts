import { defaultSpikeSettings, type SpikeSettings, type TokenBaseline } from "./anomaly.ts"
import { defaultDriftSettings, type DriftSettings, type DriftState } from "./drift-fold.ts"
import type { Environment } from "./environments.ts"
import type { GoalState } from "./goals.ts"
import { addUsage, localDate, noUsage, type Usage } from "./rule-evaluation.ts"

/**
 * What the engine keeps of one user between records (an actor's state, snapshotted with each
 * batch): open sessions, usage per calendar window, goals, the drift streak, the token baseline.
 */
export interface OpenSession {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly adapter: string
  readonly client_session_id: string
  readonly project_id: string | null
  readonly started_at: string
  readonly last_activity_at: string
  readonly timeout_s: number
  readonly tokens_in: number
  readonly tokens_out: number
  readonly cost_usd: number
  readonly signal_count: number
  readonly error_count: number
  /** Model names in first-seen order, with how many signals used each. */
  readonly model_counts: ReadonlyArray<readonly [string, number]>
}

export interface UserState {
  /** Open sessions by run (`sessionKey` in user-fold.ts: environment, adapter, client session id). */
  readonly open: Readonly<Record<string, OpenSession>>
  /**
   * The user's usage per calendar window, by `<environment>:d:<YYYY-MM-DD>` and
   * `<environment>:m:<YYYY-MM>` (UTC): the current and previous window of each kind. Counted
   * for every signal, blocked or not, so it is part of the fold and rebuilt by replay.
   */
  readonly usage?: Readonly<Record<string, Usage>>
  /** The user's goals (of both environments) by id, whatever their status: a closed goal can be reopened. */
  readonly goals?: Readonly<Record<string, GoalState>>
  /**
   * Goal drift per environment (drift-fold.ts): the off-goal streak, its evidence and the context
   * of the on-goal work. A number is a state snapshotted before context-2: the streak alone.
   */
  readonly drift?: Readonly<Partial<Record<Environment, number | DriftState>>>
  /** Tokens per signal baseline per environment (token_spike). */
  readonly tokens?: Readonly<Partial<Record<Environment, TokenBaseline>>>
}

/** The tunables of the fold's intelligence: they change what it derives, so replay must use the same. */
export interface FoldSettings {
  readonly drift: DriftSettings
  readonly spike: SpikeSettings
}

export const defaultFoldSettings: FoldSettings = { drift: defaultDriftSettings, spike: defaultSpikeSettings }

/** The user's usage in one window, before whatever the state has not seen yet. */
export const usageIn = (state: UserState, environment: Environment, window: "daily" | "monthly", key: string): Usage =>
  state.usage?.[`${environment}:${window === "daily" ? "d" : "m"}:${key}`] ?? noUsage

export const countUsage = (
  state: UserState,
  environment: Environment,
  ts: string,
  timeZone: string | undefined,
  add: Usage
): Readonly<Record<string, Usage>> => {
  const next: Record<string, Usage> = { ...state.usage }
  const date = localDate(ts, timeZone)
  for (const key of [`${environment}:d:${date}`, `${environment}:m:${date.slice(0, 7)}`]) {
    const before = next[key]
    next[key] = addUsage(before ?? noUsage, add)
    // Keep the two most recent windows of each kind per environment; older ones can no longer
    // apply. Only a new window can make one too many (every state was kept that way).
    if (before !== undefined) continue
    const prefix = key.slice(0, key.lastIndexOf(":") + 1)
    const kept = Object.keys(next).filter((k) => k.startsWith(prefix)).sort().slice(-2)
    for (const k of Object.keys(next)) if (k.startsWith(prefix) && !kept.includes(k)) delete next[k]
  }
  return next
}

export const emptyUserState: UserState = { open: {} }
