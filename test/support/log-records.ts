import { driftMethod } from "../../src/domain/drift.ts"
import type { GoalRecord, SignalRecord } from "../../src/domain/records.ts"

/**
 * The n-th signal record of a user, as an adapter's signal becomes one: a distinct millisecond,
 * signal id and cost per n, and metadata with non-ASCII text and quotes (what a log must keep
 * byte for byte).
 */
export const signalRecord = (user: string, n: number): SignalRecord => ({
  v: 1,
  kind: "signal",
  org_id: "org_contract",
  environment: "test",
  user_id: user,
  ts: new Date(Date.UTC(2025, 0, 1, 0, 0, 0, n)).toISOString(),
  signal_id: `sig_${user}_${n}`,
  type: "user-prompt",
  adapter: "claude-code",
  client_session_id: `cs_${user}`,
  metadata: { n, note: "üñí \"quoted\"" },
  session_timeout_s: 1800,
  cost: { usd: n / 1000, estimated: true, model_known: false }
})

let seq = 0

/**
 * A post-tool signal of user_a at `at` (ms) with a fresh signal id, anything else as given:
 * the fold's tests build their logs from it.
 */
export const signalAt = (over: Partial<SignalRecord> & { readonly at: number }): SignalRecord => {
  const { at, ...rest } = over
  seq++
  return {
    v: 1,
    kind: "signal",
    org_id: "org_1",
    environment: "live",
    user_id: "user_a",
    ts: new Date(at).toISOString(),
    signal_id: `sig_${seq.toString(16).padStart(32, "0")}`,
    type: "post-tool",
    adapter: "claude-code",
    client_session_id: "cs-1",
    metadata: {},
    session_timeout_s: 1800,
    cost: { usd: 0, estimated: false, model_known: false },
    ...rest
  }
}

/** A goal command of user_a, stamped with the drift detector in force: the drift tests' goals. */
export const goalAt = (over: Partial<GoalRecord> & Pick<GoalRecord, "op" | "ts">): GoalRecord => ({
  v: 1,
  kind: "goal",
  org_id: "org_1",
  environment: "live",
  user_id: "user_a",
  command_id: `gcmd_${++seq}`,
  goal_id: "goal_login",
  drift_method: driftMethod,
  ...over
})
