import type { Environment } from "./environments.ts"
import type { Plan, RateLimitOverrides } from "./plans.ts"
import type { Scope } from "./scopes.ts"
import type { Visibility } from "./roles.ts"
import type { Role } from "./tenancy.ts"

/** A person signed in to the dashboard, calling the management API with the session's cookie. */
export interface SignedInCaller {
  readonly userId: string
  readonly role: Role
  /** What the role sees of the org's activity through the endpoint called (src/domain/roles.ts). */
  readonly visibility: Visibility
}

/**
 * Who is calling the management API: an org's API key, in one environment, or a signed-in person
 * (`person` set, `keyId` empty), whose scopes come from their role.
 */
export interface ApiKeyPrincipal {
  readonly keyId: string
  readonly orgId: string
  readonly plan: Plan
  readonly environment: Environment
  readonly scopes: ReadonlyArray<Scope>
  readonly rateLimits: RateLimitOverrides
  readonly person?: SignedInCaller
}

/** Who is calling the engine API: one user of an org, through a license key, in one environment. */
export interface LicensePrincipal {
  readonly keyId: string
  readonly orgId: string
  readonly userId: string
  readonly plan: Plan
  readonly environment: Environment
  /** The org's session inactivity timeout, stamped on each signal the user sends. */
  readonly sessionTimeoutS: number
  /** The org's time zone for budget windows, stamped on each signal. */
  readonly timeZone: string
  /** The teams the user is in, stamped on each signal (team budgets count it there). */
  readonly teamIds: ReadonlyArray<string>
  /** The org's goal-drift streak, stamped on the signals drift is judged by; undefined: the deployment's. */
  readonly driftPrompts?: number | undefined
}
