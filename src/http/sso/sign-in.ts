import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { AuditActor, AuditOrigin } from "../../domain/audit.ts"
import { allowsLiveKeys } from "../../domain/plans.ts"
import { admitEmail, groupsOf, type SignInRefusal } from "../../domain/sso-access.ts"
import { roleForGroups } from "../../domain/sso-roles.ts"
import { AuditLog } from "../../store/audit-repo.ts"
import { DashboardSessions } from "../../store/dashboard-sessions-repo.ts"
import { personForSignIn } from "../../store/sign-in-people.ts"
import type { SignInSettings } from "../../store/sso-sign-in-repo.ts"

/**
 * What happens once the identity provider has vouched for a person (the ID token validated):
 * the org's admission rules, the match to its user, the group → role mapping, a new dashboard
 * session, and the audit entries of each (sign-in, failed sign-in, role change).
 */

/** Why a sign-in failed, for the audit log and the page the person sees. */
export type SignInFailure = SignInRefusal | "provider_error" | "id_token_rejected" | "provider_unreachable"

export const failureText: Record<SignInFailure, string> = {
  email_missing: "The identity provider did not say what your e-mail address is (the email claim).",
  email_unverified: "Your e-mail address is not verified with the identity provider.",
  domain_not_allowed: "People with your e-mail domain may not sign in to this org.",
  no_such_user: "This org has no user with your e-mail address. Ask one of its admins to add you.",
  user_deactivated: "Your user in this org is deactivated.",
  provider_error: "The identity provider did not sign you in.",
  id_token_rejected: "The identity provider's answer could not be verified, so it was refused.",
  provider_unreachable: "The identity provider could not be reached."
}

const environmentOf = (settings: SignInSettings) => (allowsLiveKeys(settings.plan) ? "live" : "test")

/**
 * A failed sign-in's entry. Its actor is the person's user when they were matched, else their
 * e-mail (`email:<address>`) when the provider named one, else `unknown`; `detail` is the
 * library's or the provider's message, which never holds a token.
 */
export const recordFailure = (
  settings: SignInSettings,
  failure: { readonly reason: SignInFailure; readonly detail?: string; readonly email?: string; readonly userId?: string },
  origin: AuditOrigin
) =>
  Effect.flatMap(AuditLog, (audit) =>
    audit.record({
      orgId: settings.orgId,
      environment: environmentOf(settings),
      actor: { type: "user", id: failure.userId ?? (failure.email ? `email:${failure.email.toLowerCase()}` : "unknown") },
      action: "user.sign_in_failed",
      resource: { type: "user", id: failure.userId ?? null },
      before: null,
      after: { reason: failure.reason, ...(failure.email ? { email: failure.email } : {}), ...(failure.detail ? { detail: failure.detail } : {}) },
      origin
    }))

export interface SignedIn {
  readonly sessionId: string
  readonly expiresAt: Date
}

/**
 * Signs the person of `claims` in: a new session, or the reason they may not (recorded). The role
 * change, the session and the entries are one transaction: none is kept without the others.
 */
export const signIn = (settings: SignInSettings, claims: Readonly<Record<string, unknown>>, ttlSeconds: number, origin: AuditOrigin) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const sessions = yield* DashboardSessions
    const admitted = admitEmail(claims, settings.allowedEmailDomains)
    const email = typeof claims.email === "string" ? claims.email : undefined
    if ("refused" in admitted) {
      yield* recordFailure(settings, { reason: admitted.refused, ...(email ? { email } : {}) }, origin)
      return { refused: admitted.refused as SignInFailure }
    }
    const name = typeof claims.name === "string" ? claims.name : undefined
    return yield* sql.withTransaction(Effect.gen(function*() {
      const person = yield* personForSignIn({ orgId: settings.orgId, email: admitted.email, name, createUsers: settings.createUsers })
      if ("refused" in person) {
        yield* recordFailure(settings, { reason: person.refused, email: admitted.email }, origin)
        return { refused: person.refused as SignInFailure }
      }
      const actor: AuditActor = { type: "user", id: person.userId }
      const entry = (action: string, before: Record<string, unknown> | null, after: Record<string, unknown> | null) =>
        audit.record({
          orgId: settings.orgId,
          environment: environmentOf(settings),
          actor,
          action,
          resource: { type: "user", id: person.userId },
          before,
          after,
          origin
        })
      if (person.created) yield* entry("user.create", null, yield* audit.snapshot(settings.orgId, "user", person.userId))
      const groups = groupsOf(claims, settings.groupsClaim)
      const role = roleForGroups(settings.groupRoles, groups)
      if (role !== undefined && role !== person.role) {
        const before = yield* audit.snapshot(settings.orgId, "user", person.userId)
        yield* sql`UPDATE users SET role = ${role} WHERE id = ${person.userId} AND org_id = ${settings.orgId}`
        yield* entry("user.role_change", before, { ...(yield* audit.snapshot(settings.orgId, "user", person.userId)), groups })
      }
      const made = yield* sessions.create({ orgId: settings.orgId, userId: person.userId, ttlSeconds })
      yield* entry("user.sign_in", null, {
        email: admitted.email,
        role: role ?? person.role,
        groups,
        session_expires_at: made.session.expiresAt.toISOString()
      })
      return { sessionId: made.id, expiresAt: made.session.expiresAt } satisfies SignedIn
    })).pipe(Effect.orDie)
  })
