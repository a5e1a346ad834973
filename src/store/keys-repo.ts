import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { generateApiKey, generateLicenseKey, hashKey, keyHint } from "../domain/credentials.ts"
import type { Environment } from "../domain/environments.ts"
import { IdPrefix, makeId } from "../domain/ids.ts"
import { type Page, toPage } from "../domain/pagination.ts"
import { allowsLiveKeys } from "../domain/plans.ts"
import type { Scope } from "../domain/scopes.ts"
import {
  type ApiKey,
  KeyNotFound,
  type LicenseKey,
  LiveKeysNotOnPlan,
  type OrgNotFound,
  UnknownReference,
  UserDeactivated
} from "../domain/tenancy.ts"
import type { Orgs } from "./orgs-repo.ts"
import { deactivatedIds, iso, isoNN, missingIds, type PageRequest, pageAfter } from "./tenancy-sql.ts"

/** An org's credentials: API keys (per environment, with scopes) and users' license keys. */
export interface Keys {
  readonly createApiKey: (
    orgId: string,
    input: { readonly environment: Environment; readonly name: string; readonly scopes: ReadonlyArray<Scope> }
  ) => Effect.Effect<{ readonly record: ApiKey; readonly key: string }, OrgNotFound | LiveKeysNotOnPlan>
  readonly listApiKeys: (orgId: string, environment: Environment, page: PageRequest) => Effect.Effect<Page<ApiKey>>
  readonly createLicenseKey: (
    orgId: string,
    input: { readonly environment: Environment; readonly user_id: string }
  ) => Effect.Effect<
    { readonly record: LicenseKey; readonly key: string },
    OrgNotFound | LiveKeysNotOnPlan | UnknownReference | UserDeactivated
  >
  readonly listLicenseKeys: (orgId: string, environment: Environment, page: PageRequest) => Effect.Effect<Page<LicenseKey>>
  /** Revokes an API or license key by id; scoped to an org and environment when given. */
  readonly revokeKey: (
    keyId: string,
    within?: { readonly orgId: string; readonly environment: Environment }
  ) => Effect.Effect<void, KeyNotFound>
}

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

export const makeKeys = (orgs: Pick<Orgs, "getOrg">, options: { readonly apiKeyPrefix: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const createApiKey = Effect.fn("Tenancy.createApiKey")(function*(
      orgId: string,
      input: { readonly environment: Environment; readonly name: string; readonly scopes: ReadonlyArray<Scope> }
    ) {
      const org = yield* orgs.getOrg(orgId)
      if (input.environment === "live" && !allowsLiveKeys(org.plan)) return yield* new LiveKeysNotOnPlan(org.plan)
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
        FROM api_keys WHERE org_id = ${orgId} AND environment = ${environment} ${pageAfter(sql, page.cursor)}
        ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
      return toPage(rows.map(toApiKey), page.limit, (k) => k.id)
    })

    const createLicenseKey = Effect.fn("Tenancy.createLicenseKey")(function*(
      orgId: string,
      input: { readonly environment: Environment; readonly user_id: string }
    ) {
      const org = yield* orgs.getOrg(orgId)
      if (input.environment === "live" && !allowsLiveKeys(org.plan)) return yield* new LiveKeysNotOnPlan(org.plan)
      const missing = yield* missingIds(sql, "users", orgId, [input.user_id])
      if (missing.length > 0) return yield* new UnknownReference("user_id", [input.user_id])
      if ((yield* deactivatedIds(sql, orgId, [input.user_id])).length > 0) return yield* UserDeactivated.forKey(input.user_id)
      const key = generateLicenseKey()
      // The user's row is share-locked as it is checked: a deactivation at the same time waits
      // for this key and then revokes it, or has committed first and no key is made.
      const rows = yield* sql<LicenseKeyRow>`
        INSERT INTO license_keys (id, org_id, user_id, environment, key_hash, key_hint)
        SELECT ${makeId(IdPrefix.licenseKey)}, ${orgId}, u.id, ${input.environment}, ${hashKey(key)}, ${keyHint(key)}
        FROM (SELECT id FROM users WHERE org_id = ${orgId} AND id = ${input.user_id} AND deactivated_at IS NULL FOR SHARE) u
        RETURNING id, user_id, environment, key_hint, created_at, revoked_at`.pipe(Effect.orDie)
      if (!rows[0]) return yield* UserDeactivated.forKey(input.user_id)
      return { record: toLicenseKey(rows[0]), key }
    })

    const listLicenseKeys = Effect.fn("Tenancy.listLicenseKeys")(function*(
      orgId: string,
      environment: Environment,
      page: PageRequest
    ) {
      const rows = yield* sql<LicenseKeyRow>`SELECT id, user_id, environment, key_hint, created_at, revoked_at
        FROM license_keys WHERE org_id = ${orgId} AND environment = ${environment} ${pageAfter(sql, page.cursor)}
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
      if (rows.length === 0) return yield* new KeyNotFound(keyId)
    })

    return { createApiKey, listApiKeys, createLicenseKey, listLicenseKeys, revokeKey } satisfies Keys
  })
