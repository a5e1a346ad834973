import type { SignalRecord } from "../../src/domain/records.ts"

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
