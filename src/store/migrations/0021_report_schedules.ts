import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Scheduled spend reports: per org and environment, a period (weekly or monthly) and the channels
 * its summary goes to. `next_due_at` is the instant the next report is due (the end of the
 * current period in the org's time zone); the report job claims due rows with SKIP LOCKED and, in
 * the same transaction, moves it on and queues the messages in `notifications`.
 */
export const m0021_report_schedules = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE report_schedules (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      name text NOT NULL,
      period text NOT NULL CHECK (period IN ('weekly','monthly')),
      channel_ids text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      next_due_at timestamptz NOT NULL,
      last_sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    )`
  yield* sql`CREATE INDEX report_schedules_by_org ON report_schedules (org_id, environment, id DESC)`
  yield* sql`CREATE INDEX report_schedules_due ON report_schedules (next_due_at) WHERE enabled`
})
