import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { hashKey, keyHint } from "../domain/credentials.ts"
import type { Environment } from "../domain/environments.ts"
import { type FleetCredential, type FleetPrincipal, generateFleetCredential, type UnknownIdentities, type UnknownIdentity } from "../domain/fleet.ts"
import { IdPrefix, makeId } from "../domain/ids.ts"
import { type Page, toPage } from "../domain/pagination.ts"
import { allowsLiveKeys, type Plan } from "../domain/plans.ts"
import { KeyNotFound, LiveKeysNotOnPlan, type OrgNotFound } from "../domain/tenancy.ts"
import type { Orgs } from "./orgs-repo.ts"
import { iso, isoNN, type PageRequest, pageAfter } from "./tenancy-sql.ts"

/** A user of the org as a fleet credential resolves a claimed e-mail to it (the license principal's fields). */
export interface FleetMember {
  readonly userId: string
  readonly teamIds: ReadonlyArray<string>
  readonly sessionTimeoutS: number
  readonly timeZone: string
  readonly driftPrompts?: number | undefined
}

/** Fleet credentials, the org's choice for unknown identities, and the refused ones counted. */
export interface Fleet {
  readonly createFleetCredential: (
    orgId: string,
    input: { readonly environment: Environment; readonly name: string }
  ) => Effect.Effect<{ readonly record: FleetCredential; readonly key: string }, OrgNotFound | LiveKeysNotOnPlan>
  readonly listFleetCredentials: (orgId: string, environment: Environment, page: PageRequest) => Effect.Effect<Page<FleetCredential>>
  readonly revokeFleetCredential: (orgId: string, environment: Environment, id: string) => Effect.Effect<void, KeyNotFound>
  readonly authenticateFleetCredential: (key: string) => Effect.Effect<FleetPrincipal | undefined>
  /** The active user of the org with this e-mail, in any letter case. */
  readonly fleetMember: (orgId: string, email: string) => Effect.Effect<FleetMember | undefined>
  readonly unknownIdentitiesOf: (orgId: string) => Effect.Effect<UnknownIdentities>
  readonly setUnknownIdentities: (orgId: string, value: UnknownIdentities) => Effect.Effect<void>
  /** Counts `records` refused records of an identity that is no user of the org. */
  readonly countUnknownIdentity: (orgId: string, environment: Environment, identity: string, records: number) => Effect.Effect<void>
  readonly listUnknownIdentities: (orgId: string, environment: Environment, limit: number) => Effect.Effect<ReadonlyArray<UnknownIdentity>>
}

interface CredentialRow {
  readonly id: string
  readonly name: string
  readonly environment: Environment
  readonly key_hint: string
  readonly created_at: Date
  readonly revoked_at: Date | null
}
const toCredential = (r: CredentialRow): FleetCredential => ({ ...r, created_at: isoNN(r.created_at), revoked_at: iso(r.revoked_at) })

export const makeFleet = (orgs: Pick<Orgs, "getOrg">) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const createFleetCredential = Effect.fn("Fleet.createCredential")(function*(
      orgId: string,
      input: { readonly environment: Environment; readonly name: string }
    ) {
      const org = yield* orgs.getOrg(orgId)
      if (input.environment === "live" && !allowsLiveKeys(org.plan)) return yield* new LiveKeysNotOnPlan(org.plan)
      const key = generateFleetCredential(input.environment)
      const rows = yield* sql<CredentialRow>`
        INSERT INTO fleet_credentials (id, org_id, environment, name, key_hash, key_hint)
        VALUES (${makeId(IdPrefix.fleetCredential)}, ${orgId}, ${input.environment}, ${input.name}, ${hashKey(key)}, ${keyHint(key)})
        RETURNING id, name, environment, key_hint, created_at, revoked_at`.pipe(Effect.orDie)
      return { record: toCredential(rows[0]!), key }
    })

    const listFleetCredentials = Effect.fn("Fleet.listCredentials")(function*(orgId: string, environment: Environment, page: PageRequest) {
      const rows = yield* sql<CredentialRow>`SELECT id, name, environment, key_hint, created_at, revoked_at
        FROM fleet_credentials WHERE org_id = ${orgId} AND environment = ${environment} ${pageAfter(sql, page.cursor)}
        ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
      return toPage(rows.map(toCredential), page.limit, (k) => k.id)
    })

    const revokeFleetCredential = Effect.fn("Fleet.revokeCredential")(function*(orgId: string, environment: Environment, id: string) {
      const rows = yield* sql<{ readonly id: string }>`
        UPDATE fleet_credentials SET revoked_at = coalesce(revoked_at, now())
        WHERE id = ${id} AND org_id = ${orgId} AND environment = ${environment} RETURNING id`.pipe(Effect.orDie)
      if (rows.length === 0) return yield* new KeyNotFound(id)
    })

    const authenticateFleetCredential = Effect.fn("Fleet.authenticate")(function*(key: string) {
      const rows = yield* sql<{
        readonly id: string
        readonly org_id: string
        readonly environment: Environment
        readonly plan: Plan
        readonly unknown_identities: UnknownIdentities
      }>`SELECT k.id, k.org_id, k.environment, o.plan, o.unknown_identities
        FROM fleet_credentials k JOIN orgs o ON o.id = k.org_id
        WHERE k.key_hash = ${hashKey(key)} AND k.revoked_at IS NULL`.pipe(Effect.orDie)
      const row = rows[0]
      if (!row) return undefined
      return {
        keyId: row.id,
        orgId: row.org_id,
        plan: row.plan,
        environment: row.environment,
        unknownIdentities: row.unknown_identities
      } satisfies FleetPrincipal
    })

    const fleetMember = Effect.fn("Fleet.member")(function*(orgId: string, email: string) {
      const rows = yield* sql<{
        readonly id: string
        readonly session_timeout_s: number
        readonly time_zone: string
        readonly drift_prompts: number | null
        readonly team_ids: ReadonlyArray<string>
      }>`SELECT u.id, o.session_timeout_s, o.time_zone, o.drift_prompts,
          ARRAY(SELECT m.team_id FROM team_members m WHERE m.user_id = u.id ORDER BY m.team_id) AS team_ids
        FROM users u JOIN orgs o ON o.id = u.org_id
        WHERE u.org_id = ${orgId} AND lower(u.email) = lower(${email}) AND u.deactivated_at IS NULL`.pipe(Effect.orDie)
      const row = rows[0]
      if (!row) return undefined
      return {
        userId: row.id,
        teamIds: row.team_ids,
        sessionTimeoutS: row.session_timeout_s,
        timeZone: row.time_zone,
        ...(row.drift_prompts === null ? {} : { driftPrompts: row.drift_prompts })
      } satisfies FleetMember
    })

    const unknownIdentitiesOf = (orgId: string) =>
      sql<{ readonly v: UnknownIdentities }>`SELECT unknown_identities AS v FROM orgs WHERE id = ${orgId}`.pipe(
        Effect.map((rows) => rows[0]?.v ?? "refuse"),
        Effect.orDie
      )

    const setUnknownIdentities = (orgId: string, value: UnknownIdentities) =>
      sql`UPDATE orgs SET unknown_identities = ${value} WHERE id = ${orgId}`.pipe(Effect.asVoid, Effect.orDie)

    const countUnknownIdentity = (orgId: string, environment: Environment, identity: string, records: number) =>
      sql`INSERT INTO fleet_unknown_identities (org_id, environment, identity, count)
        VALUES (${orgId}, ${environment}, ${identity.slice(0, 320)}, ${records})
        ON CONFLICT (org_id, environment, identity)
        DO UPDATE SET count = fleet_unknown_identities.count + excluded.count, last_seen = now()`.pipe(Effect.asVoid, Effect.orDie)

    const listUnknownIdentities = Effect.fn("Fleet.listUnknownIdentities")(function*(orgId: string, environment: Environment, limit: number) {
      const rows = yield* sql<{ readonly identity: string; readonly first_seen: Date; readonly last_seen: Date; readonly count: string }>`
        SELECT identity, first_seen, last_seen, count::text AS count FROM fleet_unknown_identities
        WHERE org_id = ${orgId} AND environment = ${environment}
        ORDER BY last_seen DESC, identity LIMIT ${limit}`.pipe(Effect.orDie)
      return rows.map((r) => ({ identity: r.identity, first_seen: isoNN(r.first_seen), last_seen: isoNN(r.last_seen), count: Number(r.count) }))
    })

    return {
      createFleetCredential,
      listFleetCredentials,
      revokeFleetCredential,
      authenticateFleetCredential,
      fleetMember,
      unknownIdentitiesOf,
      setUnknownIdentities,
      countUnknownIdentity,
      listUnknownIdentities
    } satisfies Fleet
  })
