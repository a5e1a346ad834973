import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IdPrefix, makeId } from "../domain/ids.ts"
import type { SignInRefusal } from "../domain/sso-access.ts"
import type { Role } from "../domain/tenancy.ts"

export interface SignedInPerson {
  readonly userId: string
  readonly role: Role
  /** Whether this sign-in created the user (the org's `create_users`). */
  readonly created: boolean
}

/**
 * The org's user a person signing in is: the one with the same e-mail in any letter case (as
 * users are stored, migration 0009), or, when the org lets sign-in create users, a new member
 * named as the identity provider names them. A deactivated user is refused, not re-created.
 */
export const personForSignIn = Effect.fn("personForSignIn")(function*(
  input: { readonly orgId: string; readonly email: string; readonly name: string | undefined; readonly createUsers: boolean }
) {
  const sql = yield* SqlClient.SqlClient
  type Row = { readonly id: string; readonly role: Role; readonly deactivated_at: Date | null }
  const existing = () => sql<Row>`SELECT id, role, deactivated_at FROM users WHERE org_id = ${input.orgId} AND lower(email) = lower(${input.email})`
  const found = yield* existing()
  const match = found[0]
  if (match !== undefined) {
    if (match.deactivated_at !== null) return { refused: "user_deactivated" as SignInRefusal }
    return { userId: match.id, role: match.role, created: false } satisfies SignedInPerson
  }
  if (!input.createUsers) return { refused: "no_such_user" as SignInRefusal }
  const name = input.name?.trim() || input.email
  // Two first sign-ins at once make one user: the loser's insert does nothing and reads the winner's.
  const inserted = yield* sql<{ readonly id: string }>`INSERT INTO users (id, org_id, email, name, role)
    SELECT ${makeId(IdPrefix.user)}, ${input.orgId}, ${input.email.toLowerCase()}, ${name.slice(0, 200)}, 'member'
    WHERE NOT EXISTS (SELECT 1 FROM users WHERE org_id = ${input.orgId} AND lower(email) = lower(${input.email}))
    ON CONFLICT DO NOTHING
    RETURNING id`
  if (inserted.length > 0) return { userId: inserted[0]!.id, role: "member" as Role, created: true } satisfies SignedInPerson
  const winner = (yield* existing())[0]!
  return { userId: winner.id, role: winner.role, created: false } satisfies SignedInPerson
}, Effect.orDie)
