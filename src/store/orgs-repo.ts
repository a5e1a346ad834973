import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IdPrefix, makeId } from "../domain/ids.ts"
import type { UnknownIdentities } from "../domain/fleet.ts"
import type { OrgSettings } from "../domain/org-settings.ts"
import type { Plan } from "../domain/plans.ts"
import { OrgNotFound } from "../domain/tenancy.ts"
import { isoNN } from "./tenancy-sql.ts"

export interface OrgRecord {
  readonly id: string
  readonly name: string
  readonly plan: Plan
  readonly session_timeout_s: number
  readonly time_zone: string
  readonly rate_limit_per_minute: number | null
  readonly rate_limit_per_hour: number | null
  readonly rate_limit_per_day: number | null
  readonly unknown_identities: UnknownIdentities
  /** The org's goal-drift streak; null: the deployment's. */
  readonly drift_prompts: number | null
  readonly created_at: string
}

/** Orgs: the tenants, their plan and settings. */
export interface Orgs {
  readonly createOrg: (input: { readonly name: string; readonly plan: Plan }) => Effect.Effect<OrgRecord>
  readonly getOrg: (orgId: string) => Effect.Effect<OrgRecord, OrgNotFound>
  readonly findOrg: (idOrName: string) => Effect.Effect<OrgRecord, OrgNotFound>
  /** Sets the settings given (validated by the caller); the ones left out keep their values. */
  readonly updateOrg: (orgId: string, settings: OrgSettings) => Effect.Effect<OrgRecord, OrgNotFound>
  readonly countOrgs: Effect.Effect<number>
}

type OrgRow = Omit<OrgRecord, "created_at"> & { readonly created_at: Date }
const toOrg = (r: OrgRow): OrgRecord => ({ ...r, created_at: isoNN(r.created_at) })

export const makeOrgs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const orgColumns = sql`id, name, plan, session_timeout_s, time_zone, rate_limit_per_minute,
    rate_limit_per_hour, rate_limit_per_day, unknown_identities, drift_prompts, created_at`

  const createOrg = Effect.fn("Tenancy.createOrg")(function*(input: { readonly name: string; readonly plan: Plan }) {
    const rows = yield* sql<OrgRow>`
      INSERT INTO orgs (id, name, plan) VALUES (${makeId(IdPrefix.org)}, ${input.name}, ${input.plan})
      RETURNING ${orgColumns}`.pipe(Effect.orDie)
    return toOrg(rows[0]!)
  })

  const getOrg = Effect.fn("Tenancy.getOrg")(function*(orgId: string) {
    const rows = yield* sql<OrgRow>`
      SELECT ${orgColumns} FROM orgs WHERE id = ${orgId}`.pipe(Effect.orDie)
    const row = rows[0]
    if (!row) return yield* new OrgNotFound(orgId)
    return toOrg(row)
  })

  const findOrg = Effect.fn("Tenancy.findOrg")(function*(idOrName: string) {
    const rows = yield* sql<OrgRow>`
      SELECT ${orgColumns} FROM orgs WHERE id = ${idOrName} OR name = ${idOrName}
      ORDER BY (id = ${idOrName}) DESC, created_at LIMIT 1`.pipe(Effect.orDie)
    const row = rows[0]
    if (!row) return yield* new OrgNotFound(idOrName, "name")
    return toOrg(row)
  })

  const updateOrg = Effect.fn("Tenancy.updateOrg")(function*(orgId: string, settings: OrgSettings) {
    const rows = yield* sql<OrgRow>`
      UPDATE orgs SET
        time_zone = coalesce(${settings.time_zone ?? null}, time_zone),
        session_timeout_s = coalesce(${settings.session_timeout ?? null}, session_timeout_s),
        drift_prompts = CASE WHEN ${settings.drift_prompts !== undefined} THEN ${settings.drift_prompts ?? null}::smallint
          ELSE drift_prompts END
      WHERE id = ${orgId}
      RETURNING ${orgColumns}`.pipe(Effect.orDie)
    const row = rows[0]
    if (!row) return yield* new OrgNotFound(orgId)
    return toOrg(row)
  })

  const countOrgs = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM orgs`.pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.orDie
  )

  return { createOrg, getOrg, findOrg, updateOrg, countOrgs } satisfies Orgs
})
