import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The coding tools' productivity counters as exported over OTLP (src/domain/tool-metrics.ts): one
 * row per data point, keyed by its user, series and time window, so a resent export is a no-op.
 * Written by the OTLP route before it answers; not signals, so no replay rebuilds them.
 */
export const m0023_tool_metric_points = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE tool_metric_points (
      org_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      user_id text NOT NULL,
      series text NOT NULL,
      start_ns numeric(20) NOT NULL,
      time_ns numeric(20) NOT NULL,
      ts timestamptz NOT NULL,
      tool text NOT NULL,
      figure text NOT NULL,
      cumulative boolean NOT NULL,
      value double precision NOT NULL,
      PRIMARY KEY (org_id, environment, user_id, series, start_ns, time_ns)
    )`
  yield* sql`CREATE INDEX tool_metric_points_by_ts ON tool_metric_points (org_id, environment, ts)`
})
