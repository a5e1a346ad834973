import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IdPrefix, makeId } from "../domain/ids.ts"
import { decodeCursor, type Page, toPage } from "../domain/pagination.ts"
import {
  NameTaken,
  type Role,
  type Team,
  TeamInUse,
  TeamNotFound,
  UnknownReference,
  type User,
  UserDeactivated,
  UserNotFound,
  type UserStatus
} from "../domain/tenancy.ts"
import { deactivatedIds, iso, isoNN, missingIds, type PageRequest, takenIfUnique, uniqueAsTaken } from "./tenancy-sql.ts"

/** What PATCH /users/:id may change; absent fields stay as they are. `team_ids` replaces the user's teams. */
export interface UserChanges {
  readonly name?: string | undefined
  readonly role?: Role | undefined
  readonly team_ids?: ReadonlyArray<string> | undefined
  readonly status?: UserStatus | undefined
}

/** What POST /teams and PATCH /teams/:id set; `member_ids` and `lead_ids` replace the team's. */
export interface TeamChanges {
  readonly name?: string | undefined
  readonly member_ids?: ReadonlyArray<string> | undefined
  /** Members of the team (after the change) who lead it; when absent, the leads who stay members stay leads. */
  readonly lead_ids?: ReadonlyArray<string> | undefined
}

/** An org's users and its teams, which are sets of its active users. */
export interface People {
  readonly createUser: (
    orgId: string,
    input: { readonly email: string; readonly name: string; readonly role: Role; readonly team_ids?: ReadonlyArray<string> | undefined }
  ) => Effect.Effect<User, NameTaken | UnknownReference>
  readonly getUser: (orgId: string, userId: string) => Effect.Effect<User, UserNotFound>
  readonly listUsers: (orgId: string, page: PageRequest) => Effect.Effect<Page<User>>
  /**
   * Changes a user. Deactivating revokes the user's license keys (both environments) and takes it
   * out of its teams; a deactivated user is in no team and gets no key until reactivated.
   */
  readonly updateUser: (
    orgId: string,
    userId: string,
    input: UserChanges
  ) => Effect.Effect<User, UserNotFound | UserDeactivated | UnknownReference>
  readonly getTeam: (orgId: string, teamId: string) => Effect.Effect<Team, TeamNotFound>
  /** Renames a team or replaces its members. */
  readonly updateTeam: (
    orgId: string,
    teamId: string,
    input: TeamChanges
  ) => Effect.Effect<Team, TeamNotFound | NameTaken | UserDeactivated | UnknownReference>
  readonly createTeam: (
    orgId: string,
    input: TeamChanges & { readonly name: string }
  ) => Effect.Effect<Team, NameTaken | UserDeactivated | UnknownReference>
  readonly listTeams: (orgId: string, page: PageRequest) => Effect.Effect<Page<Team>>
  /** Deletes a team and its memberships; refused while a rule of either environment is scoped to it. */
  readonly deleteTeam: (orgId: string, teamId: string) => Effect.Effect<void, TeamNotFound | TeamInUse>
  /** The ids of the org's teams the user leads. */
  readonly ledTeams: (orgId: string, userId: string) => Effect.Effect<ReadonlyArray<string>>
}

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
  readonly lead_ids: ReadonlyArray<string> | null
  readonly created_at: Date
}
const toTeam = (r: TeamRow): Team => ({
  ...r,
  member_ids: [...(r.member_ids ?? [])],
  lead_ids: [...(r.lead_ids ?? [])],
  created_at: isoNN(r.created_at)
})

export const makePeople = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const userSelect = (orgId: string) =>
    sql`
    SELECT u.id, u.email, u.name, u.role, u.created_at, u.deactivated_at,
      coalesce(array_agg(tm.team_id ORDER BY tm.team_id) FILTER (WHERE tm.team_id IS NOT NULL), '{}') AS team_ids
    FROM users u LEFT JOIN team_members tm ON tm.user_id = u.id
    WHERE u.org_id = ${orgId}`

  const getUser = Effect.fn("Tenancy.getUser")(function*(orgId: string, userId: string) {
    const rows = yield* sql<UserRow>`${userSelect(orgId)} AND u.id = ${userId} GROUP BY u.id`.pipe(Effect.orDie)
    const row = rows[0]
    if (!row) return yield* new UserNotFound(userId)
    return toUser(row)
  })

  const createUser = Effect.fn("Tenancy.createUser")(function*(
    orgId: string,
    input: { readonly email: string; readonly name: string; readonly role: Role; readonly team_ids?: ReadonlyArray<string> | undefined }
  ) {
    const teamIds = [...new Set(input.team_ids ?? [])]
    const missing = yield* missingIds(sql, "teams", orgId, teamIds)
    if (missing.length > 0) return yield* new UnknownReference("team_ids", missing)
    const id = makeId(IdPrefix.user)
    const taken = `a user with email ${input.email}`
    const inserted = yield* sql.withTransaction(Effect.gen(function*() {
      // An address in any letter case is taken (the database's index says so too, migration 0009).
      const rows = yield* sql`INSERT INTO users (id, org_id, email, name, role)
        SELECT ${id}, ${orgId}, ${input.email}, ${input.name}, ${input.role}
        WHERE NOT EXISTS (SELECT 1 FROM users WHERE org_id = ${orgId} AND lower(email) = lower(${input.email}))
        RETURNING id`
      if (rows.length === 0) return false
      for (const teamId of teamIds) yield* sql`INSERT INTO team_members (team_id, user_id) VALUES (${teamId}, ${id})`
      return true
    })).pipe(uniqueAsTaken(taken))
    if (!inserted) return yield* new NameTaken(taken)
    return yield* getUser(orgId, id).pipe(Effect.orDie)
  })

  /**
   * Puts active users in a team, inside the caller's transaction. Each user's row is share-
   * locked as it is checked, so a deactivation running at the same time either waits for this
   * transaction (and then takes the user out of the team) or has committed first, and then
   * the user is not added and this fails with UserDeactivated (rolling the transaction back).
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
    if (gone.length > 0) return yield* UserDeactivated.asMembers(gone)
  })

  const updateUser = Effect.fn("Tenancy.updateUser")(function*(orgId: string, userId: string, input: UserChanges) {
    const current = yield* getUser(orgId, userId)
    const staysDeactivated = input.status === undefined ? current.status === "deactivated" : input.status === "deactivated"
    const teamIds = input.team_ids === undefined ? undefined : [...new Set(input.team_ids)]
    if (teamIds !== undefined && teamIds.length > 0 && staysDeactivated) return yield* UserDeactivated.inTeams(userId)
    if (teamIds !== undefined) {
      const missing = yield* missingIds(sql, "teams", orgId, teamIds)
      if (missing.length > 0) return yield* new UnknownReference("team_ids", missing)
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
        if (teamIds !== undefined && teamIds.length > 0) return yield* UserDeactivated.inTeams(userId)
        yield* sql`UPDATE license_keys SET revoked_at = now() WHERE user_id = ${userId} AND revoked_at IS NULL`
        yield* sql`DELETE FROM team_members WHERE user_id = ${userId}`
      } else if (teamIds !== undefined) {
        yield* sql`DELETE FROM team_members WHERE user_id = ${userId}`
        for (const teamId of teamIds) yield* addMembers(orgId, teamId, [userId])
      }
    })).pipe(Effect.catchTag("SqlError", Effect.die))
    return yield* getUser(orgId, userId).pipe(Effect.orDie)
  })

  const listUsers = Effect.fn("Tenancy.listUsers")(function*(orgId: string, page: PageRequest) {
    const after = page.cursor === undefined ? undefined : decodeCursor(page.cursor)
    const rows = yield* sql<UserRow>`${userSelect(orgId)} ${after === undefined ? sql`` : sql`AND u.id < ${after}`}
      GROUP BY u.id ORDER BY u.id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
    return toPage(rows.map(toUser), page.limit, (u) => u.id)
  })

  const teamSelect = (orgId: string) =>
    sql`
    SELECT t.id, t.name, t.created_at,
      coalesce(array_agg(tm.user_id ORDER BY tm.user_id) FILTER (WHERE tm.user_id IS NOT NULL), '{}') AS member_ids,
      coalesce(array_agg(tm.user_id ORDER BY tm.user_id) FILTER (WHERE tm.lead), '{}') AS lead_ids
    FROM teams t LEFT JOIN team_members tm ON tm.team_id = t.id
    WHERE t.org_id = ${orgId}`

  /** The members a request names, each of the org and active. */
  const checkMembers = Effect.fnUntraced(function*(orgId: string, memberIds: ReadonlyArray<string>) {
    const missing = yield* missingIds(sql, "users", orgId, memberIds)
    if (missing.length > 0) return yield* new UnknownReference("member_ids", missing)
    const deactivated = yield* deactivatedIds(sql, orgId, memberIds)
    if (deactivated.length > 0) return yield* UserDeactivated.asMembers(deactivated)
  })

  /** The leads a request names, each a member of the team (as it will be). */
  const checkLeads = Effect.fnUntraced(function*(memberIds: ReadonlyArray<string>, leadIds: ReadonlyArray<string>) {
    const unique = [...new Set(leadIds)]
    const notMembers = unique.filter((id) => !memberIds.includes(id))
    if (notMembers.length > 0) return yield* new UnknownReference("lead_ids", notMembers)
    return unique
  })

  /** Makes exactly `leadIds` the team's leads, inside the caller's transaction. */
  const markLeads = (teamId: string, leadIds: ReadonlyArray<string>) =>
    sql`UPDATE team_members SET lead = (user_id IN ${sql.in(leadIds.length === 0 ? [""] : leadIds)}) WHERE team_id = ${teamId}`

  const createTeam = Effect.fn("Tenancy.createTeam")(function*(
    orgId: string,
    input: TeamChanges & { readonly name: string }
  ) {
    const memberIds = [...new Set(input.member_ids ?? [])]
    yield* checkMembers(orgId, memberIds)
    const leadIds = yield* checkLeads(memberIds, input.lead_ids ?? [])
    const id = makeId(IdPrefix.team)
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO teams (id, org_id, name) VALUES (${id}, ${orgId}, ${input.name})`
      yield* addMembers(orgId, id, memberIds)
      yield* markLeads(id, leadIds)
    })).pipe(Effect.catchTag("SqlError", takenIfUnique(`a team named ${input.name}`)))
    const rows = yield* sql<TeamRow>`${teamSelect(orgId)} AND t.id = ${id} GROUP BY t.id`.pipe(Effect.orDie)
    return toTeam(rows[0]!)
  })

  const getTeam = Effect.fn("Tenancy.getTeam")(function*(orgId: string, teamId: string) {
    const rows = yield* sql<TeamRow>`${teamSelect(orgId)} AND t.id = ${teamId} GROUP BY t.id`.pipe(Effect.orDie)
    const row = rows[0]
    if (!row) return yield* new TeamNotFound(teamId)
    return toTeam(row)
  })

  const updateTeam = Effect.fn("Tenancy.updateTeam")(function*(
    orgId: string,
    teamId: string,
    input: TeamChanges
  ) {
    const team = yield* getTeam(orgId, teamId)
    const memberIds = input.member_ids === undefined ? undefined : [...new Set(input.member_ids)]
    if (memberIds !== undefined) yield* checkMembers(orgId, memberIds)
    const members = memberIds ?? team.member_ids
    const leadIds = yield* checkLeads(members, input.lead_ids ?? team.lead_ids.filter((id) => members.includes(id)))
    yield* sql.withTransaction(Effect.gen(function*() {
      if (input.name !== undefined) yield* sql`UPDATE teams SET name = ${input.name} WHERE org_id = ${orgId} AND id = ${teamId}`
      if (memberIds !== undefined) {
        yield* sql`DELETE FROM team_members WHERE team_id = ${teamId}`
        yield* addMembers(orgId, teamId, memberIds)
      }
      yield* markLeads(teamId, leadIds)
    })).pipe(Effect.catchTag("SqlError", takenIfUnique(`a team named ${input.name}`)))
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
      if (team.length === 0) return yield* new TeamNotFound(teamId)
      const rules = yield* sql<{ readonly id: string }>`SELECT id FROM rules
        WHERE org_id = ${orgId} AND scope = 'team' AND scope_id = ${teamId} ORDER BY id`
      if (rules.length > 0) return yield* new TeamInUse(teamId, rules.map((r) => r.id))
      yield* sql`DELETE FROM team_members WHERE team_id = ${teamId}`
      yield* sql`DELETE FROM teams WHERE id = ${teamId}`
    })).pipe(Effect.catchTag("SqlError", Effect.die))
  })

  const ledTeams = Effect.fn("Tenancy.ledTeams")(function*(orgId: string, userId: string) {
    const rows = yield* sql<{ readonly team_id: string }>`SELECT tm.team_id FROM team_members tm JOIN teams t ON t.id = tm.team_id
      WHERE t.org_id = ${orgId} AND tm.user_id = ${userId} AND tm.lead ORDER BY tm.team_id`.pipe(Effect.orDie)
    return rows.map((r) => r.team_id)
  })

  return { createUser, getUser, listUsers, updateUser, getTeam, updateTeam, createTeam, listTeams, deleteTeam, ledTeams } satisfies People
})
