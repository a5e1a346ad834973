import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"
import { m0001_tenancy } from "./migrations/0001_tenancy.ts"
import { m0002_signal_log } from "./migrations/0002_signal_log.ts"
import { m0003_partition_owners } from "./migrations/0003_partition_owners.ts"
import { m0004_rules } from "./migrations/0004_rules.ts"
import { m0005_webhooks } from "./migrations/0005_webhooks.ts"
import { m0006_scope_usage_and_goals } from "./migrations/0006_scope_usage_and_goals.ts"
import { m0007_events_without_signal_id_index } from "./migrations/0007_events_without_signal_id_index.ts"
import { m0008_room_for_updates } from "./migrations/0008_room_for_updates.ts"
import { m0009_user_email_any_case } from "./migrations/0009_user_email_any_case.ts"
import { m0010_unfinished_replays } from "./migrations/0010_unfinished_replays.ts"
import { m0011_event_verdicts } from "./migrations/0011_event_verdicts.ts"
import { m0012_user_deactivation } from "./migrations/0012_user_deactivation.ts"
import { m0013_kept_verdicts } from "./migrations/0013_kept_verdicts.ts"
import { m0014_fence_lost } from "./migrations/0014_fence_lost.ts"
import { m0015_principal_changes } from "./migrations/0015_principal_changes.ts"
import { m0016_rules_version } from "./migrations/0016_rules_version.ts"
import { m0017_notification_channels } from "./migrations/0017_notification_channels.ts"
import { m0018_log_identity } from "./migrations/0018_log_identity.ts"
import { m0019_audit_log } from "./migrations/0019_audit_log.ts"
import { m0020_redact_action } from "./migrations/0020_redact_action.ts"
import { m0021_report_schedules } from "./migrations/0021_report_schedules.ts"
import { m0022_sso } from "./migrations/0022_sso.ts"
import { m0023_tool_metric_points } from "./migrations/0023_tool_metric_points.ts"
import { m0024_fleet_credentials } from "./migrations/0024_fleet_credentials.ts"
import { m0025_sso_sign_in } from "./migrations/0025_sso_sign_in.ts"
import { m0026_roles } from "./migrations/0026_roles.ts"
import { m0027_drift_prompts } from "./migrations/0027_drift_prompts.ts"

/**
 * Forward-only, numbered migrations, one module each in migrations/. Each runs once, in id order,
 * inside the migrator's transaction; never edit one that has shipped, add the next number instead.
 * The keys are what the migrator records (id and name): a shipped one keeps its key.
 */
const all = {
  "0001_tenancy": m0001_tenancy,
  "0002_signal_log": m0002_signal_log,
  "0003_partition_owners": m0003_partition_owners,
  "0004_rules": m0004_rules,
  "0005_webhooks": m0005_webhooks,
  "0006_scope_usage_and_goals": m0006_scope_usage_and_goals,
  "0007_events_without_signal_id_index": m0007_events_without_signal_id_index,
  "0008_room_for_updates": m0008_room_for_updates,
  "0009_user_email_any_case": m0009_user_email_any_case,
  "0010_unfinished_replays": m0010_unfinished_replays,
  "0011_event_verdicts": m0011_event_verdicts,
  "0012_user_deactivation": m0012_user_deactivation,
  "0013_kept_verdicts": m0013_kept_verdicts,
  "0014_fence_lost": m0014_fence_lost,
  "0015_principal_changes": m0015_principal_changes,
  "0016_rules_version": m0016_rules_version,
  "0017_notification_channels": m0017_notification_channels,
  "0018_log_identity": m0018_log_identity,
  "0019_audit_log": m0019_audit_log,
  "0020_redact_action": m0020_redact_action,
  "0021_report_schedules": m0021_report_schedules,
  "0022_sso": m0022_sso,
  "0023_tool_metric_points": m0023_tool_metric_points,
  "0024_fleet_credentials": m0024_fleet_credentials,
  "0025_sso_sign_in": m0025_sso_sign_in,
  "0026_roles": m0026_roles,
  "0027_drift_prompts": m0027_drift_prompts
}

export const migrations = Migrator.fromRecord(all)

/** The newest migration id (from the list, so it cannot lag it); /readyz reports not ready until the database has it. */
export const latestMigrationId = Math.max(...Object.keys(all).map((name) => Number.parseInt(name, 10)))

/** Every migration's id, in order (numbers may be skipped while branches are merged). */
export const migrationIds: ReadonlyArray<number> = Object.keys(all).map((name) => Number.parseInt(name, 10)).sort((a, b) => a - b)

/**
 * The read indexes of `events` (as migration 0002 created them). A full replay drops them while
 * it writes and builds them again at the end: one sort per index instead of an index insert per
 * row. Start-up builds any that a replay interrupted before its end left missing. A migration
 * that changes one of them must change it here too.
 */
export const eventReadIndexes: ReadonlyArray<{ readonly name: string; readonly on: string }> = [
  { name: "events_by_ts", on: "events (org_id, environment, ts DESC, id DESC)" },
  { name: "events_by_session", on: "events (session_id, ts, id)" },
  { name: "events_by_user", on: "events (org_id, environment, user_id, ts DESC, id DESC)" }
]

/** Builds the missing read indexes, each on its own connection (the database sorts them in parallel). */
export const buildEventReadIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.forEach(
    eventReadIndexes,
    ({ name, on }) =>
      sql.withTransaction(Effect.andThen(
        sql`SET LOCAL maintenance_work_mem = '256MB'`,
        sql.unsafe(`CREATE INDEX IF NOT EXISTS ${name} ON ${on}`)
      )),
    { concurrency: "unbounded", discard: true }
  )
})

export const dropEventReadIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const { name } of eventReadIndexes) yield* sql.unsafe(`DROP INDEX IF EXISTS ${name}`)
})
