import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { hashKey } from "../domain/credentials.ts"
import type { Environment } from "../domain/environments.ts"
import type { Plan } from "../domain/plans.ts"
import type { ApiKeyPrincipal, LicensePrincipal } from "../domain/principal.ts"
import type { Scope } from "../domain/scopes.ts"

/** What a presented key resolves to: the principal of an unrevoked key, or undefined. */
export interface KeyAuthentication {
  readonly authenticateApiKey: (key: string) => Effect.Effect<ApiKeyPrincipal | undefined>
  readonly authenticateLicenseKey: (key: string) => Effect.Effect<LicensePrincipal | undefined>
}

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

export const makeKeyAuthentication = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

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
      readonly drift_prompts: number | null
      readonly team_ids: ReadonlyArray<string>
    }>`SELECT k.id, k.org_id, k.user_id, k.environment, o.plan, o.session_timeout_s, o.time_zone, o.drift_prompts,
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
      teamIds: sharedList(row.team_ids),
      ...(row.drift_prompts === null ? {} : { driftPrompts: row.drift_prompts })
    } satisfies LicensePrincipal
  })

  return { authenticateApiKey, authenticateLicenseKey } satisfies KeyAuthentication
})
