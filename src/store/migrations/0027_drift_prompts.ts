import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * An org's own goal-drift streak (PATCH /org `drift_prompts`): how many off-goal prompts in a row
 * make a drift, 0 for none; NULL keeps the deployment's `DRIFT_PROMPTS`.
 */
export const m0027_drift_prompts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE orgs ADD COLUMN drift_prompts smallint CHECK (drift_prompts BETWEEN 0 AND 20)`
})
