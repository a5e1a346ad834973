import type { ApiKeyPrincipal } from "../../domain/principal.ts"
import type { Tenant } from "../../store/tenant-pages.ts"

/**
 * What the caller's activity queries are confined to: its org and environment and, for a signed-in
 * person whose role sees less than the whole org through this endpoint, the users they may see.
 */
export const tenantOf = (p: ApiKeyPrincipal): Tenant => {
  const person = p.person
  return person === undefined || person.visibility === "org"
    ? { orgId: p.orgId, environment: p.environment }
    : { orgId: p.orgId, environment: p.environment, seenBy: { userId: person.userId, visibility: person.visibility } }
}
