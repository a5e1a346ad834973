import { randomBytes } from "node:crypto"
import { Schema } from "effect"
import { Environment } from "./environments.ts"
import type { Plan } from "./plans.ts"

/**
 * Fleet credentials: one org-level ingest credential that managed settings carry for every
 * machine; each record names its user by the tool's own identity (an e-mail address). Shaped as
 * API keys are, with a prefix of its own so that it is recognised wherever it turns up:
 * `flt_live_<32 hex>` / `flt_test_<32 hex>`, stored as SHA-256, shown once.
 */
export const fleetCredentialPattern = /^flt_(live|test)_[0-9a-f]{32}$/

export const isFleetCredential = (credential: string): boolean => credential.startsWith("flt_")

export const generateFleetCredential = (environment: Environment): string => `flt_${environment}_${randomBytes(16).toString("hex")}`

/** What becomes of a claimed identity that is no user of the org (PATCH /org `unknown_identities`). */
export const UnknownIdentities = Schema.Literals(["create", "refuse"])
export type UnknownIdentities = typeof UnknownIdentities.Type

/** Who sends through a fleet credential: an org, in one environment; the user is named per record. */
export interface FleetPrincipal {
  readonly keyId: string
  readonly orgId: string
  readonly plan: Plan
  readonly environment: Environment
  readonly unknownIdentities: UnknownIdentities
}

/** Claimed identities are e-mail addresses (users are matched by e-mail, in any letter case). */
export const identityProblem = (identity: string | undefined): string | undefined => {
  if (identity === undefined || identity.trim() === "") return "no user identity (user.email)"
  if (identity.length > 320 || !/^[^\s@]+@[^\s@]+$/.test(identity.trim())) return "the user identity is not an e-mail address"
  return undefined
}

export const FleetCredential = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  environment: Environment,
  key_hint: Schema.String,
  created_at: Schema.String,
  revoked_at: Schema.NullOr(Schema.String)
})
export type FleetCredential = typeof FleetCredential.Type

export const UnknownIdentity = Schema.Struct({
  identity: Schema.String.annotate({ description: "the identity a record claimed (an e-mail address, or what stood in its place)" }),
  first_seen: Schema.String,
  last_seen: Schema.String,
  count: Schema.Int.annotate({ description: "how many records (OTLP log records, hook calls) of it were refused" })
})
export type UnknownIdentity = typeof UnknownIdentity.Type
