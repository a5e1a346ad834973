import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Rules may redact (issue 42): the adapter takes the secrets found out of a tool's input where the
 * tool lets a hook rewrite it, and blocks where it cannot. Only the action's check widens.
 */
export const m0020_redact_action = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE rules DROP CONSTRAINT IF EXISTS rules_action_check`
  yield* sql`ALTER TABLE rules ADD CONSTRAINT rules_action_check CHECK (action IN ('block','warn','log','notify','redact'))`
})
