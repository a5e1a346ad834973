import { Effect, Queue } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { Tenancy } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"

describe("migration 0015: a committed change to what a key resolves to is announced", () => {
  it("changes of orgs, users, keys and team memberships notify with their table, and so does a new user; new orgs and keys, and rolled-back changes, do not", async () => {
    const databaseUrl = await freshDatabase()
    const org = await bootstrapOrg(databaseUrl, "notices", "team")
    const heard = await withStore(
      databaseUrl,
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const changes = yield* (yield* Tenancy).principalChanges
        /** What the statements of `step` announced: the notices before a marker sent after it. */
        const announced = <A, E>(step: Effect.Effect<A, E>) =>
          Effect.gen(function*() {
            yield* step
            yield* sql`SELECT pg_notify('signal_engine_principals', 'marker')`
            const tables: Array<string> = []
            for (;;) {
              const { payload } = yield* Queue.take(changes)
              if (payload === "marker") return tables
              tables.push(payload)
            }
          })
        const o = org.org_id
        return {
          newOrg: yield* announced(sql`INSERT INTO orgs (id, name, plan) VALUES ('org_other', 'other', 'team')`),
          newUser: yield* announced(sql`INSERT INTO users (id, org_id, email, name, role) VALUES ('user_n', ${o}, 'n@x.dev', 'N', 'member')`),
          newLicenseKey: yield* announced(sql`INSERT INTO license_keys (id, org_id, user_id, environment, key_hash, key_hint)
            VALUES ('lk_n', ${o}, 'user_n', 'live', 'hash-n', 'n')`),
          newApiKey: yield* announced(sql`INSERT INTO api_keys (id, org_id, environment, name, key_hash, key_hint, scopes)
            VALUES ('ak_n', ${o}, 'live', 'n', 'hash-ak', 'n', '{}')`),
          newTeam: yield* announced(sql`INSERT INTO teams (id, org_id, name) VALUES ('team_n', ${o}, 'n')`),
          joinTeam: yield* announced(sql`INSERT INTO team_members (team_id, user_id) VALUES ('team_n', 'user_n')`),
          renameUser: yield* announced(sql`UPDATE users SET name = 'M' WHERE id = 'user_n'`),
          revokeLicenseKey: yield* announced(sql`UPDATE license_keys SET revoked_at = now() WHERE id = 'lk_n'`),
          revokeApiKey: yield* announced(sql`UPDATE api_keys SET revoked_at = now() WHERE id = 'ak_n'`),
          orgSettings: yield* announced(sql`UPDATE orgs SET time_zone = 'Europe/Paris' WHERE id = ${o}`),
          rolledBack: yield* announced(
            sql.withTransaction(Effect.andThen(sql`UPDATE users SET name = 'R' WHERE id = 'user_n'`, Effect.fail("undone"))).pipe(
              Effect.ignore
            )
          ),
          // One transaction of several statements on one table is one notice (PostgreSQL folds equal ones).
          offboard: yield* announced(sql.withTransaction(Effect.all([
            sql`UPDATE users SET name = 'O' WHERE id = 'user_n'`,
            sql`DELETE FROM team_members WHERE user_id = 'user_n'`,
            sql`UPDATE license_keys SET revoked_at = now() WHERE user_id = 'user_n'`,
            sql`UPDATE license_keys SET key_hint = 'o' WHERE user_id = 'user_n'`
          ]))),
          deleteOrg: yield* announced(sql`DELETE FROM orgs WHERE id = 'org_other'`)
        }
      })).pipe(Effect.orDie)
    )
    expect(heard).toEqual({
      newOrg: [],
      // Since migration 0024: a fleet credential's node may have cached the e-mail as no user.
      newUser: ["users"],
      newLicenseKey: [],
      newApiKey: [],
      newTeam: [],
      joinTeam: ["team_members"],
      renameUser: ["users"],
      revokeLicenseKey: ["license_keys"],
      revokeApiKey: ["api_keys"],
      orgSettings: ["orgs"],
      rolledBack: [],
      offboard: ["users", "team_members", "license_keys"],
      // Its users', teams' and keys' rows go with it (cascades), announced as theirs.
      deleteOrg: expect.arrayContaining(["orgs", "users", "license_keys", "api_keys"])
    })
  })
})
