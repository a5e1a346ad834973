import { makeId } from "../domain/ids.ts"
import type { SignalRecord } from "../domain/records.ts"
import type { DriftDetected } from "../domain/fold-result.ts"

/**
 * The goal-drift signal the engine appends for a user whose off-goal streak reached the
 * configured length: in the session of the prompt that completed it, stamped now. Its metadata
 * says which goal, since when and on what evidence (the off-goal prompts), as the timeline shows it.
 */
export const driftSignal = ({ idempotency_key: _key, ...r }: SignalRecord, drift: DriftDetected, now: number): SignalRecord => ({
  ...r,
  ts: new Date(now).toISOString(),
  signal_id: makeId("sig", now),
  type: "goal-drift",
  metadata: {
    goal_id: drift.goal_id,
    goal_description: drift.goal,
    since: drift.since,
    score: drift.score,
    off_goal_prompts: drift.off_goal_prompts,
    evidence: drift.evidence,
    prompt_signal_id: drift.signal_id,
    method: drift.method,
    source: "engine"
  },
  cost: { usd: 0, estimated: false, model_known: r.cost.model_known }
})
