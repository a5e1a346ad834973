import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"
import { migrationIds } from "../../src/store/migrations.ts"

const withSql = <A>(databaseUrl: string, run: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  withStore(databaseUrl, Effect.flatMap(SqlClient.SqlClient, run).pipe(Effect.orDie))

describe("migration 0009: an e-mail address names one user of an org in any letter case", () => {
  it("the database enforces it; an org that already has two users differing only in case keeps them, and the migration passes", async () => {
    const databaseUrl = await freshDatabase()
    const org = await bootstrapOrg(databaseUrl, "twins", "team")
    const index = () => withSql(databaseUrl, (sql) => sql`SELECT indexname FROM pg_indexes WHERE indexname = 'users_org_email_any_case'`)
    expect(await index()).toHaveLength(1)
    const insertUser = (id: string, email: string) =>
      withSql(databaseUrl, (sql) => sql`INSERT INTO users (id, org_id, email, name, role) VALUES (${id}, ${org.org_id}, ${email}, 'T', 'member')`)
    await insertUser("user_twin_1", "twin@x.dev")
    await expect(insertUser("user_twin_2", "Twin@X.dev")).rejects.toThrow()

    // A database from before the migration, with such twins (in one go: opening a store migrates).
    await withSql(databaseUrl, (sql) =>
      Effect.gen(function*() {
        // As it was before 0009 (the migrator runs what comes after the latest it applied).
        yield* sql`DROP INDEX users_org_email_any_case`
        yield* sql`DROP TABLE unfinished_replays`
        yield* sql`DROP TABLE kept_verdicts`
        yield* sql`DROP FUNCTION signal_engine_fence_lost`
        yield* sql`DROP FUNCTION signal_engine_principals_changed CASCADE`
        yield* sql`DROP FUNCTION signal_engine_rules_changed CASCADE`
        yield* sql`DROP TABLE rules_version`
        yield* sql`DROP TABLE notifications, org_alert_channels, channels`
        yield* sql`DROP TABLE log_identity`
        yield* sql`DROP TABLE audit_log`
        yield* sql`DROP TABLE sso_sign_in_attempts`
        yield* sql`DROP TABLE org_sso, dashboard_sessions`
        yield* sql`DROP FUNCTION audit_log_refuse_change, audit_log_purge`
        yield* sql`DROP TABLE report_schedules`
        yield* sql`DROP TABLE tool_metric_points`
        yield* sql`DROP TABLE fleet_credentials, fleet_unknown_identities`
        yield* sql`ALTER TABLE orgs DROP COLUMN unknown_identities, DROP COLUMN drift_prompts`
        yield* sql`ALTER TABLE events DROP COLUMN verdict`
        yield* sql`ALTER TABLE users DROP COLUMN deactivated_at`
        yield* sql`ALTER TABLE team_members DROP COLUMN lead`
        yield* sql`DELETE FROM effect_sql_migrations WHERE migration_id >= 9`
        yield* sql`INSERT INTO users (id, org_id, email, name, role) VALUES ('user_twin_2', ${org.org_id}, 'Twin@X.dev', 'T', 'member')`
      }))
    // The migration goes through (opening the store runs it), without the index.
    expect(await withSql(databaseUrl, (sql) => sql`SELECT migration_id AS id FROM effect_sql_migrations WHERE migration_id >= 9 ORDER BY 1`)).toEqual(
      migrationIds.filter((id) => id >= 9).map((id) => ({ id }))
    )
    expect(await index()).toHaveLength(0)
    expect(await withSql(databaseUrl, (sql) => sql`SELECT id FROM users WHERE lower(email) = 'twin@x.dev' ORDER BY id`)).toEqual([
      { id: "user_twin_1" },
      { id: "user_twin_2" }
    ])
  })
})
