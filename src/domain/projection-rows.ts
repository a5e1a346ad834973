import type { Environment } from "./environments.ts"
import type { GoalState } from "./goals.ts"
import type { StoredVerdict } from "./verdict.ts"

/** The rows the fold writes to the projections (sessions, events, goals), and their ids. */
export interface SessionRow {
  readonly id: string
  readonly org_id: string
  readonly environment: Environment
  readonly user_id: string
  readonly adapter: string
  readonly client_session_id: string
  readonly project_id: string | null
  readonly started_at: string
  readonly last_activity_at: string
  readonly ended_at: string | null
  readonly end_reason: "session-end" | "timeout" | null
  readonly primary_model: string | null
  readonly models: ReadonlyArray<string>
  readonly tokens_in: number
  readonly tokens_out: number
  readonly cost_usd: number
  readonly signal_count: number
  readonly error_count: number
}

export interface EventRow {
  readonly id: string
  readonly signal_id: string
  readonly org_id: string
  readonly environment: Environment
  readonly session_id: string
  readonly user_id: string
  readonly project_id: string | null
  readonly ts: string
  readonly type: string
  readonly adapter: string
  readonly model: string | null
  readonly tokens_in: number
  readonly tokens_out: number
  readonly latency_ms: number | null
  readonly cost_usd: number
  readonly cost_estimated: boolean
  readonly model_known: boolean
  readonly error_code: string | null
  readonly metadata: Readonly<Record<string, unknown>>
  readonly log_partition: number
  readonly log_offset: number
  /** For a signal sent with an idempotency key: what the rules decided (a retry is answered with it). */
  readonly verdict?: StoredVerdict | undefined
}

/** The projection of a goal (GET /goals reads it). */
export interface GoalRow extends GoalState {
  readonly org_id: string
  readonly user_id: string
  readonly log_partition: number
}

export interface Position {
  readonly partition: number
  readonly offset: number
}

const suffix = (id: string) => id.slice(id.indexOf("_") + 1)
/** Derived ids keep replay identical: the event of sig_X is evt_X; a session is named after its first signal. */
export const eventIdFor = (signalId: string) => `evt_${suffix(signalId)}`
export const sessionIdFor = (firstSignalId: string) => `sess_${suffix(firstSignalId)}`
