import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, type Queue, type Scope as EffectScope } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"
import { generateApiKey, generateLicenseKey, hashKey, keyHint } from "../domain/credentials.ts"
import type { Environment } from "../domain/environments.ts"
import { Conflict, NotFound, Unprocessable } from "../domain/errors.ts"
import { IdPrefix, makeId } from "../domain/ids.ts"
import type { OrgSettings } from "../domain/org-settings.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import { allowsLiveKeys, type Plan } from "../domain/plans.ts"
import type { ApiKeyPrincipal, LicensePrincipal } from "../domain/principal.ts"
import { allScopes, type Scope } from "../domain/scopes.ts"
import type { ApiKey, LicenseKey, Project, Role, Team, User, UserStatus } from "../domain/tenancy.ts"

export interface OrgRecord {
  readonly id: string
  readonly name: string
  readonly plan: Plan
  readonly session_timeout_s: number
  readonly time_zone: string
  readonly rate_limit_per_minute: number | null
  readonly rate_limit_per_hour: number | null
  readonly rate_limit_per_day: number | null
  readonly created_at: string
}

/** What PATCH /users/:id may change; absent fields stay as they are. `team_ids` replaces the user's teams. */
export interface UserChanges {
  readonly name?: string | undefined
  readonly role?: Role | undefined
  readonly team_ids?: ReadonlyArray<string> | undefined
  readonly status?: UserStatus | undefined
}

export interface PageRequest {
  readonly limit: number
  readonly cursor: string | undefined
}

export interface Bootstrapped {
  readonly org_id: string
  readonly user_id: string
  readonly team_id: string
  readonly api_key_live: string | null
  readonly api_key_test: string
  readonly license_key: string
  readonly license_key_environment: Environment
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString())
const isoNN = (d: Date | string): string => new Date(d).toISOString()

interface ApiKeyRow {
  readonly id: string
  readonly name: string
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
  readonly key_hint: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}
const toApiKey = (r: ApiKeyRow): ApiKey => ({ ...r, scopes: [...r.scopes], created_at: isoNN(r.created_at), revoked_at: iso(r.revoked_at) })

interface LicenseKeyRow {
  readonly id: string
  readonly user_id: string
  readonly environment: Environment
  readonly key_hint: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}
const toLicenseKey = (r: LicenseKeyRow): LicenseKey => ({ ...r, created_at: isoNN(r.created_at), revoked_at: iso(r.revoked_at) })

interface UserRow {
  readonly id: string
  readonly email: string
  readonly name: string
  readonly role: Role
  readonly team_ids: ReadonlyArray<string> | null
  readonly deactivated_at: Date | null
  readonly created_at: Date
}
const toUser = (r: UserRow): User => ({
  id: r.id,
  email: r.email,
  name: r.name,
  role: r.role,
  team_ids: [...(r.team_ids ?? [])],
  status: r.deactivated_at === null ? "active" : "deactivated",
  deactivated_at: iso(r.deactivated_at),
  created_at: isoNN(r.created_at)
})

interface TeamRow {
  readonly id: string
  readonly name: string
  readonly member_ids: ReadonlyArray<string> | null
  readonly created_at: Date
}
const toTeam = (r: TeamRow): Team => ({ ...r, member_ids: [...(r.member_ids ?? [])], created_at: isoNN(r.created_at) })

interface ProjectRow {
  readonly id: string
  readonly name: string
  readonly created_at: Date
}
const toProject = (r: ProjectRow): Project => ({ ...r, created_at: isoNN(r.created_at) })

const liveKeysRefused = (plan: Plan) =>
  Unprocessable.of(`live keys require the team plan or higher; this org is on ${plan}`, "plan_requires_test_keys")

/**
 * Orgs, users, teams, projects and credentials. SQL failures are defects here: nothing a caller
 * could do about them; the only ones a caller can act on (a duplicate name) become Conflict.
 */
export class Tenancy extends Context.Service<Tenancy, {
  readonly createOrg: (input: { readonly name: string; readonly plan: Plan }) => Effect.Effect<OrgRecord>
  readonly getOrg: (orgId: string) => Effect.Effect<OrgRecord, NotFound>
  readonly findOrg: (idOrName: string) => Effect.Effect<OrgRecord, NotFound>
  /** Sets the settings given (validated by the caller); the ones left out keep their values. */
  readonly updateOrg: (orgId: string, settings: OrgSettings) => Effect.Effect<OrgRecord, NotFound>
  readonly countOrgs: Effect.Effect<number>
  readonly createUser: (
    orgId: string,
    input: { readonly email: string; readonly name: string; readonly role: Role; readonly team_ids?: ReadonlyArray<string> | undefined }
  ) => Effect.Effect<User, Conflict | Unprocessable>
  readonly getUser: (orgId: string, userId: string) => Effect.Effect<User, NotFound>
  readonly listUsers: (orgId: string, page: PageRequest) => Effect.Effect<Page<User>>
  /**
   * Changes a user. Deactivating revokes the user's license keys (both environments) and takes it
   * out of its teams; a deactivated user is in no team and gets no key until reactivated.
   */
  readonly updateUser: (orgId: string, userId: string, input: UserChanges) => Effect.Effect<User, NotFound | Conflict | Unprocessable>
  readonly getTeam: (orgId: string, teamId: string) => Effect.Effect<Team, NotFound>
  /** Renames a team or replaces its members. */
  readonly updateTeam: (
    orgId: string,
    teamId: string,
    input: { readonly name?: string | undefined; readonly member_ids?: ReadonlyArray<string> | undefined }
  ) => Effect.Effect<Team, NotFound | Conflict | Unprocessable>
  readonly createTeam: (
    orgId: string,
    input: { readonly name: string; readonly member_ids?: ReadonlyArray<string> | undefined }
  ) => Effect.Effect<Team, Conflict | Unprocessable>
  readonly listTeams: (orgId: string, page: PageRequest) => Effect.Effect<Page<Team>>
  /** Deletes a team and its memberships; refused while a rule of either environment is scoped to it. */
  readonly deleteTeam: (orgId: string, teamId: string) => Effect.Effect<void, NotFound | Conflict>
  readonly createProject: (orgId: string, input: { readonly name: string }) => Effect.Effect<Project, Conflict>
  readonly listProjects: (orgId: string, page: PageRequest) => Effect.Effect<Page<Project>>
  readonly deleteProject: (orgId: string, projectId: string) => Effect.Effect<void, NotFound>
  readonly createApiKey: (
    orgId: string,
    input: { readonly environment: Environment; readonly name: string; readonly scopes: ReadonlyArray<Scope> }
  ) => Effect.Effect<{ readonly record: ApiKey; readonly key: string }, NotFound | Unprocessable>
  readonly listApiKeys: (orgId: string, environment: Environment, page: PageRequest) => Effect.Effect<Page<ApiKey>>
  readonly createLicenseKey: (
    orgId: string,
    input: { readonly environment: Environment; readonly user_id: string }
  ) => Effect.Effect<{ readonly record: LicenseKey; readonly key: string }, NotFound | Conflict | Unprocessable>
  readonly listLicenseKeys: (orgId: string, environment: Environment, page: PageRequest) => Effect.Effect<Page<LicenseKey>>
  /** Revokes an API or license key by id; scoped to an org and environment when given. */
  readonly revokeKey: (
    keyId: string,
    within?: { readonly orgId: string; readonly environment: Environment }
  ) => Effect.Effect<void, NotFound>
  readonly authenticateApiKey: (key: string) => Effect.Effect<ApiKeyPrincipal | undefined>
  readonly authenticateLicenseKey: (key: string) => Effect.Effect<LicensePrincipal | undefined>
  /**
   * Notice of every committed change that can alter what a key resolves to (migration 0015), from
   * the moment the database has confirmed the listen: the payload is the changed table's name. The
   * queue fails when its connection is lost.
   */
  readonly principalChanges: Effect.Effect<Queue.Dequeue<{ readonly payload: string }, SqlError>, SqlError, EffectScope.Scope>
  readonly bootstrap: (input: { readonly org: string; readonly plan: Plan; readonly apiKeyPrefix: string }) => Effect.Effect<Bootstrapped>
}>()("signal-engine/store/Tenancy") {
  static readonly layer = (options: { readonly apiKeyPrefix: string }) =>
    Layer.effect(
      Tenancy,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const pg = yield* PgClient.PgClient

        const orgColumns = sql`id, name, plan, session_timeout_s, time_zone, rate_limit_per_minute,
          rate_limit_per_hour, rate_limit_per_day, created_at`
        const toOrg = (r: Omit<OrgRecord, "created_at"> & { readonly created_at: Date }): OrgRecord => ({
          ...r,
          created_at: isoNN(r.created_at)
        })

        /** A unique violation as a 409 with `message`; any other SQL failure is a defect. */
        const conflictIfUnique = (message: string) => (e: SqlError) =>
          e.reason._tag === "UniqueViolation" ? Effect.fail(Conflict.of(message, "already_exists")) : Effect.die(e)
        const uniqueAsConflict = (message: string) => <A, R>(self: Effect.Effect<A, SqlError, R>) =>
          Effect.catchTag(self, "SqlError", conflictIfUnique(message))

        const createOrg = Effect.fn("Tenancy.createOrg")(function*(input: { readonly name: string; readonly plan: Plan }) {
          const rows = yield* sql<Omit<OrgRecord, "created_at"> & { created_at: Date }>`
            INSERT INTO orgs (id, name, plan) VALUES (${makeId(IdPrefix.org)}, ${input.name}, ${input.plan})
            RETURNING ${orgColumns}`.pipe(Effect.orDie)
          return toOrg(rows[0]!)
        })

        const getOrg = Effect.fn("Tenancy.getOrg")(function*(orgId: string) {
          const rows = yield* sql<Omit<OrgRecord, "created_at"> & { created_at: Date }>`
            SELECT ${orgColumns} FROM orgs WHERE id = ${orgId}`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return yield* NotFound.of(`org ${orgId} not found`)
          return toOrg(row)
        })

        const findOrg = Effect.fn("Tenancy.findOrg")(function*(idOrName: string) {
          const rows = yield* sql<Omit<OrgRecord, "created_at"> & { created_at: Date }>`
            SELECT ${orgColumns} FROM orgs WHERE id = ${idOrName} OR name = ${idOrName}
            ORDER BY (id = ${idOrName}) DESC, created_at LIMIT 1`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return yield* NotFound.of(`no org with id or name ${idOrName}`)
          return toOrg(row)
        })

        const updateOrg = Effect.fn("Tenancy.updateOrg")(function*(orgId: string, settings: OrgSettings) {
          const rows = yield* sql<Omit<OrgRecord, "created_at"> & { created_at: Date }>`
            UPDATE orgs SET
              time_zone = coalesce(${settings.time_zone ?? null}, time_zone),
              session_timeout_s = coalesce(${settings.session_timeout ?? null}, session_timeout_s)
            WHERE id = ${orgId}
            RETURNING ${orgColumns}`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return yield* NotFound.of(`org ${orgId} not found`)
          return toOrg(row)
        })

        const countOrgs = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM orgs`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        )

        /** The ids among `ids` that are not of the given org's table rows. */
        const missingIds = (table: "users" | "teams", orgId: string, ids: ReadonlyArray<string>) =>
          ids.length === 0
            ? Effect.succeed([] as ReadonlyArray<string>)
            : sql<{ readonly id: string }>`SELECT id FROM ${sql(table)} WHERE org_id = ${orgId} AND id IN ${sql.in(ids)}`.pipe(
              Effect.map((rows) => ids.filter((id) => !rows.some((r) => r.id === id))),
              Effect.orDie
            )

        const userSelect = (orgId: string) => sql`
          SELECT u.id, u.email, u.name, u.role, u.created_at, u.deactivated_at,
            coalesce(array_agg(tm.team_id ORDER BY tm.team_id) FILTER (WHERE tm.team_id IS NOT NULL), '{}') AS team_ids
          FROM users u LEFT JOIN team_members tm ON tm.user_id = u.id
          WHERE u.org_id = ${orgId}`

        const getUser = Effect.fn("Tenancy.getUser")(function*(orgId: string, userId: string) {
          const rows = yield* sql<UserRow>`${userSelect(orgId)} AND u.id = ${userId} GROUP BY u.id`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return yield* NotFound.of(`user ${userId} not found`)
          return toUser(row)
        })

        const createUser = Effect.fn("Tenancy.createUser")(function*(
          orgId: string,
          input: { readonly email: string; readonly name: string; readonly role: Role; readonly team_ids?: ReadonlyArray<string> | undefined }
        ) {
          const teamIds = [...new Set(input.team_ids ?? [])]
          const missing = yield* missingIds("teams", orgId, teamIds)
          if (missing.length > 0) return yield* Unprocessable.of(`unknown team_ids: ${missing.join(", ")}`, "unknown_reference")
          const id = makeId(IdPrefix.user)
          const taken = Conflict.of(`a user with email ${input.email} already exists`, "already_exists")
          const inserted = yield* sql.withTransaction(Effect.gen(function*() {
            // An address in any letter case is taken (the database's index says so too, migration 0009).
            const rows = yield* sql`INSERT INTO users (id, org_id, email, name, role)
              SELECT ${id}, ${orgId}, ${input.email}, ${input.name}, ${input.role}
              WHERE NOT EXISTS (SELECT 1 FROM users WHERE org_id = ${orgId} AND lower(email) = lower(${input.email}))
              RETURNING id`
            if (rows.length === 0) return false
            for (const teamId of teamIds) yield* sql`INSERT INTO team_members (team_id, user_id) VALUES (${teamId}, ${id})`
            return true
          })).pipe(uniqueAsConflict(taken.error))
          if (!inserted) return yield* taken
          return yield* getUser(orgId, id).pipe(Effect.orDie)
        })

        /** The ids among `userIds` of deactivated users (they can be in no team). */
        const deactivatedIds = (orgId: string, userIds: ReadonlyArray<string>) =>
          userIds.length === 0
            ? Effect.succeed([] as ReadonlyArray<string>)
            : sql<{ readonly id: string }>`SELECT id FROM users
                WHERE org_id = ${orgId} AND id IN ${sql.in(userIds)} AND deactivated_at IS NOT NULL ORDER BY id`.pipe(
              Effect.map((rows) => rows.map((r) => r.id)),
              Effect.orDie
            )
        const deactivatedConflict = (ids: ReadonlyArray<string>) =>
          Conflict.of(`deactivated user(s) cannot be team members: ${ids.join(", ")}`, "user_deactivated")

        /**
         * Puts active users in a team, inside the caller's transaction. Each user's row is share-
         * locked as it is checked, so a deactivation running at the same time either waits for this
         * transaction (and then takes the user out of the team) or has committed first, and then
         * the user is not added and this fails with 409 (rolling the transaction back).
         */
        const addMembers = Effect.fnUntraced(function*(orgId: string, teamId: string, userIds: ReadonlyArray<string>) {
          if (userIds.length === 0) return
          const added = yield* sql<{ readonly user_id: string }>`
            INSERT INTO team_members (team_id, user_id)
            SELECT ${teamId}, u.id FROM (
              SELECT id FROM users WHERE org_id = ${orgId} AND id IN ${sql.in(userIds)} AND deactivated_at IS NULL FOR SHARE
            ) u
            RETURNING user_id`
          const gone = userIds.filter((id) => !added.some((r) => r.user_id === id))
          if (gone.length > 0) return yield* deactivatedConflict(gone)
        })

        const updateUser = Effect.fn("Tenancy.updateUser")(function*(orgId: string, userId: string, input: UserChanges) {
          const current = yield* getUser(orgId, userId)
          const staysDeactivated = input.status === undefined ? current.status === "deactivated" : input.status === "deactivated"
          const teamIds = input.team_ids === undefined ? undefined : [...new Set(input.team_ids)]
          if (teamIds !== undefined && teamIds.length > 0 && staysDeactivated) {
            return yield* Conflict.of(`user ${userId} is deactivated and can be in no team; reactivate it first`, "user_deactivated")
          }
          if (teamIds !== undefined) {
            const missing = yield* missingIds("teams", orgId, teamIds)
            if (missing.length > 0) return yield* Unprocessable.of(`unknown team_ids: ${missing.join(", ")}`, "unknown_reference")
          }
          yield* sql.withTransaction(Effect.gen(function*() {
            // The update locks the user's row: what it returns is the state every check below holds for.
            const [row] = yield* sql<{ readonly deactivated_at: Date | null }>`UPDATE users SET
                name = coalesce(${input.name ?? null}, name),
                role = coalesce(${input.role ?? null}, role),
                deactivated_at = CASE ${input.status ?? null}::text
                  WHEN 'deactivated' THEN coalesce(deactivated_at, now())
                  WHEN 'active' THEN NULL
                  ELSE deactivated_at END
              WHERE org_id = ${orgId} AND id = ${userId}
              RETURNING deactivated_at`
            if (row?.deactivated_at != null) {
              // Deactivating, or deactivated meanwhile: no key and no team survives it.
              if (teamIds !== undefined && teamIds.length > 0) {
                return yield* Conflict.of(`user ${userId} is deactivated and can be in no team; reactivate it first`, "user_deactivated")
              }
              yield* sql`UPDATE license_keys SET revoked_at = now() WHERE user_id = ${userId} AND revoked_at IS NULL`
              yield* sql`DELETE FROM team_members WHERE user_id = ${userId}`
            } else if (teamIds !== undefined) {
              yield* sql`DELETE FROM team_members WHERE user_id = ${userId}`
              for (const teamId of teamIds) yield* addMembers(orgId, teamId, [userId])
            }
          })).pipe(Effect.catchTag("SqlError", Effect.die))
          return yield* getUser(orgId, userId).pipe(Effect.orDie)
        })

        const pageAfter = (cursor: string | undefined) => {
          const after = cursor === undefined ? undefined : decodeCursor(cursor)
          return after === undefined ? sql`` : sql`AND id < ${after}`
        }

        const listUsers = Effect.fn("Tenancy.listUsers")(function*(orgId: string, page: PageRequest) {
          const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
          const rows = yield* sql<UserRow>`${userSelect(orgId)} ${after === undefined ? sql`` : sql`AND u.id < ${after}`}
            GROUP BY u.id ORDER BY u.id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
          return toPage(rows.map(toUser), page.limit, (u) => u.id)
        })

        const teamSelect = (orgId: string) => sql`
          SELECT t.id, t.name, t.created_at,
            coalesce(array_agg(tm.user_id ORDER BY tm.user_id) FILTER (WHERE tm.user_id IS NOT NULL), '{}') AS member_ids
          FROM teams t LEFT JOIN team_members tm ON tm.team_id = t.id
          WHERE t.org_id = ${orgId}`

        const createTeam = Effect.fn("Tenancy.createTeam")(function*(
          orgId: string,
          input: { readonly name: string; readonly member_ids?: ReadonlyArray<string> | undefined }
        ) {
          const memberIds = [...new Set(input.member_ids ?? [])]
          const missing = yield* missingIds("users", orgId, memberIds)
          if (missing.length > 0) return yield* Unprocessable.of(`unknown member_ids: ${missing.join(", ")}`, "unknown_reference")
          const deactivated = yield* deactivatedIds(orgId, memberIds)
          if (deactivated.length > 0) return yield* deactivatedConflict(deactivated)
          const id = makeId(IdPrefix.team)
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO teams (id, org_id, name) VALUES (${id}, ${orgId}, ${input.name})`
            yield* addMembers(orgId, id, memberIds)
          })).pipe(Effect.catchTag("SqlError", conflictIfUnique(`a team named ${input.name} already exists`)))
          const rows = yield* sql<TeamRow>`${teamSelect(orgId)} AND t.id = ${id} GROUP BY t.id`.pipe(Effect.orDie)
          return toTeam(rows[0]!)
        })

        const getTeam = Effect.fn("Tenancy.getTeam")(function*(orgId: string, teamId: string) {
          const rows = yield* sql<TeamRow>`${teamSelect(orgId)} AND t.id = ${teamId} GROUP BY t.id`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return yield* NotFound.of(`team ${teamId} not found`)
          return toTeam(row)
        })

        const updateTeam = Effect.fn("Tenancy.updateTeam")(function*(
          orgId: string,
          teamId: string,
          input: { readonly name?: string | undefined; readonly member_ids?: ReadonlyArray<string> | undefined }
        ) {
          yield* getTeam(orgId, teamId)
          const memberIds = input.member_ids === undefined ? undefined : [...new Set(input.member_ids)]
          if (memberIds !== undefined) {
            const missing = yield* missingIds("users", orgId, memberIds)
            if (missing.length > 0) return yield* Unprocessable.of(`unknown member_ids: ${missing.join(", ")}`, "unknown_reference")
            const deactivated = yield* deactivatedIds(orgId, memberIds)
            if (deactivated.length > 0) return yield* deactivatedConflict(deactivated)
          }
          yield* sql.withTransaction(Effect.gen(function*() {
            if (input.name !== undefined) yield* sql`UPDATE teams SET name = ${input.name} WHERE org_id = ${orgId} AND id = ${teamId}`
            if (memberIds !== undefined) {
              yield* sql`DELETE FROM team_members WHERE team_id = ${teamId}`
              yield* addMembers(orgId, teamId, memberIds)
            }
          })).pipe(Effect.catchTag("SqlError", conflictIfUnique(`a team named ${input.name} already exists`)))
          return yield* getTeam(orgId, teamId).pipe(Effect.orDie)
        })

        const listTeams = Effect.fn("Tenancy.listTeams")(function*(orgId: string, page: PageRequest) {
          const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
          const rows = yield* sql<TeamRow>`${teamSelect(orgId)} ${after === undefined ? sql`` : sql`AND t.id < ${after}`}
            GROUP BY t.id ORDER BY t.id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
          return toPage(rows.map(toTeam), page.limit, (t) => t.id)
        })

        const deleteTeam = Effect.fn("Tenancy.deleteTeam")(function*(orgId: string, teamId: string) {
          yield* sql.withTransaction(Effect.gen(function*() {
            // Locked, so a rule scoped to it cannot be created between the check and the delete
            // (a rule's write checks its team under a key-share lock: rules-repo.ts).
            const team = yield* sql`SELECT id FROM teams WHERE org_id = ${orgId} AND id = ${teamId} FOR UPDATE`
            if (team.length === 0) return yield* NotFound.of(`team ${teamId} not found`)
            const rules = yield* sql<{ readonly id: string }>`SELECT id FROM rules
              WHERE org_id = ${orgId} AND scope = 'team' AND scope_id = ${teamId} ORDER BY id`
            if (rules.length > 0) {
              return yield* Conflict.of(
                `rules are scoped to team ${teamId}: ${rules.map((r) => r.id).join(", ")}; delete or re-scope them first`,
                "team_in_use"
              )
            }
            yield* sql`DELETE FROM team_members WHERE team_id = ${teamId}`
            yield* sql`DELETE FROM teams WHERE id = ${teamId}`
          })).pipe(Effect.catchTag("SqlError", Effect.die))
        })

        const deleteProject = Effect.fn("Tenancy.deleteProject")(function*(orgId: string, projectId: string) {
          const rows = yield* sql`DELETE FROM projects WHERE org_id = ${orgId} AND id = ${projectId} RETURNING id`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* NotFound.of(`project ${projectId} not found`)
        })

        const createProject = Effect.fn("Tenancy.createProject")(function*(orgId: string, input: { readonly name: string }) {
          const rows = yield* sql<ProjectRow>`INSERT INTO projects (id, org_id, name)
            VALUES (${makeId(IdPrefix.project)}, ${orgId}, ${input.name}) RETURNING id, name, created_at`.pipe(
            uniqueAsConflict(`a project named ${input.name} already exists`)
          )
          return toProject(rows[0]!)
        })

        const listProjects = Effect.fn("Tenancy.listProjects")(function*(orgId: string, page: PageRequest) {
          const rows = yield* sql<ProjectRow>`SELECT id, name, created_at FROM projects
            WHERE org_id = ${orgId} ${pageAfter(page.cursor)} ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
          return toPage(rows.map(toProject), page.limit, (p) => p.id)
        })

        const createApiKey = Effect.fn("Tenancy.createApiKey")(function*(
          orgId: string,
          input: { readonly environment: Environment; readonly name: string; readonly scopes: ReadonlyArray<Scope> }
        ) {
          const org = yield* getOrg(orgId)
          if (input.environment === "live" && !allowsLiveKeys(org.plan)) return yield* liveKeysRefused(org.plan)
          const key = generateApiKey(options.apiKeyPrefix, input.environment)
          const rows = yield* sql<ApiKeyRow>`
            INSERT INTO api_keys (id, org_id, environment, name, key_hash, key_hint, scopes)
            VALUES (${makeId(IdPrefix.apiKey)}, ${orgId}, ${input.environment}, ${input.name}, ${hashKey(key)},
              ${keyHint(key)}, string_to_array(${input.scopes.join(",")}, ','))
            RETURNING id, name, environment, scopes, key_hint, created_at, revoked_at`.pipe(Effect.orDie)
          return { record: toApiKey(rows[0]!), key }
        })

        const listApiKeys = Effect.fn("Tenancy.listApiKeys")(function*(orgId: string, environment: Environment, page: PageRequest) {
          const rows = yield* sql<ApiKeyRow>`SELECT id, name, environment, scopes, key_hint, created_at, revoked_at
            FROM api_keys WHERE org_id = ${orgId} AND environment = ${environment} ${pageAfter(page.cursor)}
            ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
          return toPage(rows.map(toApiKey), page.limit, (k) => k.id)
        })

        const createLicenseKey = Effect.fn("Tenancy.createLicenseKey")(function*(
          orgId: string,
          input: { readonly environment: Environment; readonly user_id: string }
        ) {
          const org = yield* getOrg(orgId)
          if (input.environment === "live" && !allowsLiveKeys(org.plan)) return yield* liveKeysRefused(org.plan)
          const missing = yield* missingIds("users", orgId, [input.user_id])
          if (missing.length > 0) return yield* Unprocessable.of(`unknown user_id: ${input.user_id}`, "unknown_reference")
          if ((yield* deactivatedIds(orgId, [input.user_id])).length > 0) {
            return yield* Conflict.of(`user ${input.user_id} is deactivated; reactivate it before giving it a key`, "user_deactivated")
          }
          const key = generateLicenseKey()
          // The user's row is share-locked as it is checked: a deactivation at the same time waits
          // for this key and then revokes it, or has committed first and no key is made.
          const rows = yield* sql<LicenseKeyRow>`
            INSERT INTO license_keys (id, org_id, user_id, environment, key_hash, key_hint)
            SELECT ${makeId(IdPrefix.licenseKey)}, ${orgId}, u.id, ${input.environment}, ${hashKey(key)}, ${keyHint(key)}
            FROM (SELECT id FROM users WHERE org_id = ${orgId} AND id = ${input.user_id} AND deactivated_at IS NULL FOR SHARE) u
            RETURNING id, user_id, environment, key_hint, created_at, revoked_at`.pipe(Effect.orDie)
          if (!rows[0]) {
            return yield* Conflict.of(`user ${input.user_id} is deactivated; reactivate it before giving it a key`, "user_deactivated")
          }
          return { record: toLicenseKey(rows[0]), key }
        })

        const listLicenseKeys = Effect.fn("Tenancy.listLicenseKeys")(function*(
          orgId: string,
          environment: Environment,
          page: PageRequest
        ) {
          const rows = yield* sql<LicenseKeyRow>`SELECT id, user_id, environment, key_hint, created_at, revoked_at
            FROM license_keys WHERE org_id = ${orgId} AND environment = ${environment} ${pageAfter(page.cursor)}
            ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
          return toPage(rows.map(toLicenseKey), page.limit, (k) => k.id)
        })

        const revokeKey = Effect.fn("Tenancy.revokeKey")(function*(
          keyId: string,
          within?: { readonly orgId: string; readonly environment: Environment }
        ) {
          const table = keyId.startsWith(`${IdPrefix.licenseKey}_`) ? "license_keys" : "api_keys"
          const scope = within ? sql`AND org_id = ${within.orgId} AND environment = ${within.environment}` : sql``
          const rows = yield* sql<{ readonly id: string }>`
            UPDATE ${sql(table)} SET revoked_at = coalesce(revoked_at, now())
            WHERE id = ${keyId} ${scope} RETURNING id`.pipe(Effect.orDie)
          if (rows.length === 0) return yield* NotFound.of(`key ${keyId} not found`)
        })

        const authenticateApiKey = Effect.fn("Tenancy.authenticateApiKey")(function*(key: string) {
          const rows = yield* sql<{
            readonly id: string
            readonly org_id: string
            readonly environment: Environment
            readonly scopes: ReadonlyArray<Scope>
            readonly plan: Plan
            readonly rate_limit_per_minute: number | null
            readonly rate_limit_per_hour: number | null
            readonly rate_limit_per_day: number | null
          }>`SELECT k.id, k.org_id, k.environment, k.scopes, o.plan,
              o.rate_limit_per_minute, o.rate_limit_per_hour, o.rate_limit_per_day
            FROM api_keys k JOIN orgs o ON o.id = k.org_id
            WHERE k.key_hash = ${hashKey(key)} AND k.revoked_at IS NULL`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return undefined
          return {
            keyId: row.id,
            orgId: row.org_id,
            plan: row.plan,
            environment: row.environment,
            scopes: row.scopes,
            rateLimits: {
              perMinute: row.rate_limit_per_minute,
              perHour: row.rate_limit_per_hour,
              perDay: row.rate_limit_per_day
            }
          } satisfies ApiKeyPrincipal
        })

        // Principals are kept per key (src/http/auth.ts): the values an org's keys have in common
        // (its id, plan, zone, a team list) are kept once, not once per key. Bounded: past the
        // limit a table starts over, which costs only the sharing.
        const sharing = <A>() => {
          const known = new Map<string, A>()
          return (id: string, value: A): A => {
            const kept = known.get(id)
            if (kept !== undefined) return kept
            if (known.size >= 10_000) known.clear()
            known.set(id, value)
            return value
          }
        }
        const sharedString = sharing<string>()
        const shared = <A extends string>(value: A): A => sharedString(value, value) as A
        const sharedLists = sharing<ReadonlyArray<string>>()
        const sharedList = (values: ReadonlyArray<string>) => sharedLists(values.join(","), values.map(shared))

        const authenticateLicenseKey = Effect.fn("Tenancy.authenticateLicenseKey")(function*(key: string) {
          const rows = yield* sql<{
            readonly id: string
            readonly org_id: string
            readonly user_id: string
            readonly environment: Environment
            readonly plan: Plan
            readonly session_timeout_s: number
            readonly time_zone: string
            readonly team_ids: ReadonlyArray<string>
          }>`SELECT k.id, k.org_id, k.user_id, k.environment, o.plan, o.session_timeout_s, o.time_zone,
              ARRAY(SELECT m.team_id FROM team_members m WHERE m.user_id = k.user_id ORDER BY m.team_id) AS team_ids
            FROM license_keys k JOIN orgs o ON o.id = k.org_id
              -- Offboarding revokes the keys; this holds even for a key that escaped it.
              JOIN users u ON u.id = k.user_id AND u.deactivated_at IS NULL
            WHERE k.key_hash = ${hashKey(key)} AND k.revoked_at IS NULL`.pipe(Effect.orDie)
          const row = rows[0]
          if (!row) return undefined
          return {
            keyId: row.id,
            orgId: shared(row.org_id),
            userId: row.user_id,
            plan: shared(row.plan),
            environment: shared(row.environment),
            sessionTimeoutS: row.session_timeout_s,
            timeZone: shared(row.time_zone),
            teamIds: sharedList(row.team_ids)
          } satisfies LicensePrincipal
        })

        const bootstrap = Effect.fn("Tenancy.bootstrap")(function*(
          input: { readonly org: string; readonly plan: Plan; readonly apiKeyPrefix: string }
        ) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            const org = yield* createOrg({ name: input.org, plan: input.plan })
            const admin = yield* createUser(org.id, { email: "admin@localhost", name: "Admin", role: "admin" })
            const team = yield* createTeam(org.id, { name: "Default", member_ids: [admin.id] })
            const live = allowsLiveKeys(input.plan)
              ? (yield* createApiKey(org.id, { environment: "live", name: "bootstrap (live)", scopes: allScopes })).key
              : null
            const test = (yield* createApiKey(org.id, { environment: "test", name: "bootstrap (test)", scopes: allScopes })).key
            const licenseEnvironment: Environment = allowsLiveKeys(input.plan) ? "live" : "test"
            const license = yield* createLicenseKey(org.id, { environment: licenseEnvironment, user_id: admin.id })
            return {
              org_id: org.id,
              user_id: admin.id,
              team_id: team.id,
              api_key_live: live,
              api_key_test: test,
              license_key: license.key,
              license_key_environment: licenseEnvironment
            } satisfies Bootstrapped
          })).pipe(Effect.orDie)
        })

        return Tenancy.of({
          createOrg,
          getOrg,
          findOrg,
          updateOrg,
          countOrgs,
          createUser,
          getUser,
          listUsers,
          updateUser,
          getTeam,
          updateTeam,
          deleteTeam,
          deleteProject,
          createTeam,
          listTeams,
          createProject,
          listProjects,
          createApiKey,
          listApiKeys,
          createLicenseKey,
          listLicenseKeys,
          revokeKey,
          authenticateApiKey,
          authenticateLicenseKey,
          principalChanges: pg.listen("signal_engine_principals"),
          bootstrap
        })
      })
    )
}

