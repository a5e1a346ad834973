import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import type { Plan } from "../domain/plans.ts"
import type { GroupRole } from "../domain/sso-roles.ts"
import { SecretBox } from "./secret-box.ts"

/** An org's SSO settings as the sign-in flow needs them: the client secret opened. */
export interface SignInSettings {
  readonly orgId: string
  readonly orgName: string
  readonly plan: Plan
  readonly issuer: string
  readonly clientId: string
  readonly clientSecret: string
  readonly allowedEmailDomains: ReadonlyArray<string>
  readonly groupsClaim: string | null
  readonly groupRoles: ReadonlyArray<GroupRole>
  readonly createUsers: boolean
  readonly allowApiKeySignIn: boolean
}

/** A sign-in under way: what the answer of the identity provider is checked against. */
export interface SignInAttempt {
  readonly orgId: string
  readonly codeVerifier: string
  readonly nonce: string
}

const hashOf = (state: string) => createHash("sha256").update(state).digest("base64url")

/**
 * What the sign-in flow reads and keeps: the settings of the org a person names (by id, or by
 * name when exactly one org with SSO has it), and the attempts between the redirect to the
 * identity provider and its answer, each taken (deleted) once.
 */
export class SsoSignIn extends Context.Service<SsoSignIn, {
  /** The settings of the orgs with SSO whose id is `ref`, or whose name is `ref` in any case. */
  readonly settingsFor: (ref: string) => Effect.Effect<ReadonlyArray<SignInSettings>>
  readonly begin: (state: string, attempt: SignInAttempt, ttlSeconds: number) => Effect.Effect<void>
  /** The attempt of a state, deleted as it is read; undefined when unknown, used or expired. */
  readonly take: (state: string) => Effect.Effect<SignInAttempt | undefined>
}>()("signal-engine/store/SsoSignIn") {
  static readonly layer = Layer.effect(
    SsoSignIn,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const box = yield* SecretBox
      interface Row {
        readonly org_id: string
        readonly name: string
        readonly plan: Plan
        readonly issuer: string
        readonly client_id: string
        readonly client_secret_ciphertext: string
        readonly allowed_email_domains: ReadonlyArray<string>
        readonly groups_claim: string | null
        readonly group_roles: ReadonlyArray<GroupRole>
        readonly create_users: boolean
        readonly allow_api_key_sign_in: boolean
      }

      const settingsFor = Effect.fn("SsoSignIn.settingsFor")(function*(ref: string) {
        const rows = yield* sql<Row>`
          SELECT s.org_id, o.name, o.plan, s.issuer, s.client_id, s.client_secret_ciphertext, s.allowed_email_domains,
            s.groups_claim, s.group_roles, s.create_users, s.allow_api_key_sign_in
          FROM org_sso s JOIN orgs o ON o.id = s.org_id
          WHERE o.id = ${ref} OR lower(o.name) = lower(${ref})
          ORDER BY (o.id = ${ref}) DESC
          LIMIT 2`
        return yield* Effect.forEach(rows, (r) =>
          Effect.map(box.open(r.client_secret_ciphertext), (clientSecret): SignInSettings => ({
            orgId: r.org_id,
            orgName: r.name,
            plan: r.plan,
            issuer: r.issuer,
            clientId: r.client_id,
            clientSecret,
            allowedEmailDomains: r.allowed_email_domains,
            groupsClaim: r.groups_claim,
            groupRoles: r.group_roles,
            createUsers: r.create_users,
            allowApiKeySignIn: r.allow_api_key_sign_in
          })))
      }, Effect.orDie)

      const begin = Effect.fn("SsoSignIn.begin")(function*(state: string, attempt: SignInAttempt, ttlSeconds: number) {
        yield* sql`DELETE FROM sso_sign_in_attempts WHERE expires_at < now()`
        yield* sql`
          INSERT INTO sso_sign_in_attempts (state_hash, org_id, code_verifier, nonce, expires_at)
          VALUES (${hashOf(state)}, ${attempt.orgId}, ${attempt.codeVerifier}, ${attempt.nonce},
            now() + make_interval(secs => ${ttlSeconds}))`
      }, Effect.orDie)

      const take = Effect.fn("SsoSignIn.take")(function*(state: string) {
        const rows = yield* sql<{ readonly org_id: string; readonly code_verifier: string; readonly nonce: string; readonly live: boolean }>`
          DELETE FROM sso_sign_in_attempts WHERE state_hash = ${hashOf(state)}
          RETURNING org_id, code_verifier, nonce, expires_at > now() AS live`
        const row = rows[0]
        return row === undefined || !row.live ? undefined : { orgId: row.org_id, codeVerifier: row.code_verifier, nonce: row.nonce }
      }, Effect.orDie)

      return SsoSignIn.of({ settingsFor, begin, take })
    })
  )
}
