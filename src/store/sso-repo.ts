import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { normalizeDomains, SsoInvalid, SsoNotConfigured, type SsoSettings, type SsoSettingsInput, ssoProblems } from "../domain/sso.ts"
import { NotificationConfig } from "../notifications/config.ts"
import { SecretBox } from "./secret-box.ts"

interface SsoRow {
  readonly issuer: string
  readonly client_id: string
  readonly allowed_email_domains: ReadonlyArray<string>
  readonly groups_claim: string | null
  readonly group_roles: SsoSettings["group_roles"]
  readonly create_users: boolean
  readonly allow_api_key_sign_in: boolean
  readonly updated_at: Date
}

/** The path the identity provider sends people back to; the sign-in flow serves it. */
export const callbackPath = "/dashboard/sso/callback"

const columns = "issuer, client_id, allowed_email_domains, groups_claim, group_roles, create_users, allow_api_key_sign_in, updated_at"

/**
 * An org's SSO settings. The client secret is sealed with the key webhook secrets use and is
 * opened only by the sign-in flow (`clientSecret`), never answered by the API.
 */
export class SsoSettingsStore extends Context.Service<SsoSettingsStore, {
  readonly get: (orgId: string) => Effect.Effect<SsoSettings, SsoNotConfigured>
  readonly put: (orgId: string, input: SsoSettingsInput) => Effect.Effect<SsoSettings, SsoInvalid>
  readonly remove: (orgId: string) => Effect.Effect<void, SsoNotConfigured>
  /** The decrypted client secret, for the token request. */
  readonly clientSecret: (orgId: string) => Effect.Effect<string, SsoNotConfigured>
}>()("signal-engine/store/SsoSettingsStore") {
  static readonly layer = Layer.effect(
    SsoSettingsStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const box = yield* SecretBox
      const { publicBaseUrl } = yield* NotificationConfig
      const redirectUri = publicBaseUrl === undefined ? null : `${publicBaseUrl.replace(/\/+$/, "")}${callbackPath}`
      const toSettings = (row: SsoRow): SsoSettings => ({
        issuer: row.issuer,
        client_id: row.client_id,
        client_secret_set: true,
        allowed_email_domains: row.allowed_email_domains,
        groups_claim: row.groups_claim,
        group_roles: row.group_roles,
        create_users: row.create_users,
        allow_api_key_sign_in: row.allow_api_key_sign_in,
        redirect_uri: redirectUri,
        updated_at: row.updated_at.toISOString()
      })
      const notFound = () => new SsoNotConfigured("of this org")

      const get = Effect.fn("SsoSettings.get")(function*(orgId: string) {
        const rows = yield* sql<SsoRow>`SELECT ${sql.literal(columns)} FROM org_sso WHERE org_id = ${orgId}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound()
        return toSettings(rows[0]!)
      })

      const put = Effect.fn("SsoSettings.put")(function*(orgId: string, input: SsoSettingsInput) {
        const problems = ssoProblems(input)
        if (problems.length > 0) return yield* new SsoInvalid(problems)
        const domains = JSON.stringify(normalizeDomains(input.allowed_email_domains))
        const rows = yield* sql<SsoRow>`
          INSERT INTO org_sso (org_id, issuer, client_id, client_secret_ciphertext, allowed_email_domains, groups_claim,
            group_roles, create_users, allow_api_key_sign_in)
          VALUES (${orgId}, ${input.issuer.replace(/\/+$/, "")}, ${input.client_id}, ${box.seal(input.client_secret)},
            ARRAY(SELECT jsonb_array_elements_text(${domains}::jsonb)), ${input.groups_claim ?? null},
            ${JSON.stringify(input.group_roles ?? [])}::jsonb, ${input.create_users ?? false}, ${input.allow_api_key_sign_in ?? false})
          ON CONFLICT (org_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
            client_secret_ciphertext = EXCLUDED.client_secret_ciphertext,
            allowed_email_domains = EXCLUDED.allowed_email_domains, groups_claim = EXCLUDED.groups_claim,
            group_roles = EXCLUDED.group_roles, create_users = EXCLUDED.create_users, allow_api_key_sign_in = EXCLUDED.allow_api_key_sign_in, updated_at = now()
          RETURNING ${sql.literal(columns)}`.pipe(Effect.orDie)
        return toSettings(rows[0]!)
      })

      const remove = Effect.fn("SsoSettings.remove")(function*(orgId: string) {
        const rows = yield* sql`DELETE FROM org_sso WHERE org_id = ${orgId} RETURNING org_id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound()
      })

      const clientSecret = Effect.fn("SsoSettings.clientSecret")(function*(orgId: string) {
        const rows = yield* sql<{ readonly sealed: string }>`
          SELECT client_secret_ciphertext AS sealed FROM org_sso WHERE org_id = ${orgId}`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* notFound()
        return yield* box.open(rows[0]!.sealed)
      })

      return SsoSettingsStore.of({ get, put, remove, clientSecret })
    })
  )
}
