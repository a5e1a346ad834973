import type { Scope } from "./scopes.ts"
import { allScopes } from "./scopes.ts"
import type { Role } from "./tenancy.ts"

/**
 * Who may sign in with an org's identity provider, and what a signed-in person may do. The
 * identity provider's ID token is validated by the OIDC library (signature, issuer, audience,
 * expiry, nonce); these are the org's own rules on top of its claims.
 */

/** Why a sign-in is refused after the provider vouched for the person; recorded in the audit log. */
export type SignInRefusal = "email_missing" | "email_unverified" | "domain_not_allowed" | "no_such_user" | "user_deactivated"

/** The e-mail's domain, lower case; undefined for what is not an address. */
export const domainOf = (email: string): string | undefined => {
  const at = email.lastIndexOf("@")
  return at <= 0 || at === email.length - 1 ? undefined : email.slice(at + 1).toLowerCase()
}

/**
 * The ID token's e-mail, if the org lets its owner in: present, verified by the provider (an
 * unverified address would let anyone claim a colleague's), and in one of the allowed domains.
 * Providers that omit `email_verified` (Entra ID's `email` is set by the tenant's admins) are taken
 * as verified; one that says false is not.
 */
export const admitEmail = (
  claims: { readonly email?: unknown; readonly email_verified?: unknown },
  allowedDomains: ReadonlyArray<string>
): { readonly email: string } | { readonly refused: SignInRefusal } => {
  if (typeof claims.email !== "string" || claims.email.trim() === "") return { refused: "email_missing" }
  if (claims.email_verified === false || claims.email_verified === "false") return { refused: "email_unverified" }
  const email = claims.email.trim()
  const domain = domainOf(email)
  if (domain === undefined || !allowedDomains.includes(domain)) return { refused: "domain_not_allowed" }
  return { email }
}

/** The groups the provider says the person is in, from the org's configured claim (none if unset or malformed). */
export const groupsOf = (claims: Readonly<Record<string, unknown>>, groupsClaim: string | null): ReadonlyArray<string> => {
  if (groupsClaim === null) return []
  const value = claims[groupsClaim]
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === "string") : []
}

/**
 * The scopes a signed-in person's principal carries, for what checks a caller's own scopes (an API
 * key made by an admin gets no more than theirs): an admin every scope, other roles none. What a
 * person may call and see is decided by their role (src/domain/roles.ts), not by these.
 */
export const sessionScopes = (person: { readonly role: Role; readonly groups: ReadonlyArray<string> }): ReadonlyArray<Scope> =>
  person.role === "admin" ? allScopes : []
