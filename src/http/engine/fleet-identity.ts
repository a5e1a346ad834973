import { Effect } from "effect"
import type { Forbidden, Unauthorized } from "../../domain/errors.ts"
import { Forbidden as ForbiddenError } from "../../domain/errors.ts"
import { type FleetPrincipal, identityProblem } from "../../domain/fleet.ts"
import { minimumPlanFor, planHasFeature } from "../../domain/plans.ts"
import type { LicensePrincipal } from "../../domain/principal.ts"
import { RequestFacts } from "../../observability/request-facts.ts"
import type { FleetMember } from "../../store/fleet-repo.ts"
import { Tenancy } from "../../store/tenancy-repo.ts"
import { Authenticator, requirePrincipal } from "../auth.ts"

/** Whose a record sent with a fleet credential is: a user of the org, or refused (and why). */
export type Claimed =
  | { readonly _tag: "Member"; readonly principal: LicensePrincipal }
  | { readonly _tag: "Refused"; readonly reason: string }

/** A fleet credential that may send signals: valid, not live on a plan without live keys, on a plan with signals. */
export const authorizeFleet = (
  authenticator: Authenticator["Service"],
  credential: string
): Effect.Effect<FleetPrincipal, Unauthorized | Forbidden> =>
  Effect.flatMap(
    authenticator.fleetCredential(credential),
    (auth) =>
      Effect.flatMap(requirePrincipal(auth, { name: "fleet credential", code: "fleet_credential" }), (fleet) =>
        planHasFeature(fleet.plan, "signals")
          ? Effect.map(Effect.service(RequestFacts), (facts) => {
            facts.org_id = fleet.orgId
            return fleet
          })
          : Effect.fail(ForbiddenError.of(
            `signals is not available on the ${fleet.plan} plan (requires ${minimumPlanFor("signals")} or higher)`,
            "feature_not_available"
          )))
  )

const asPrincipal = (
  fleet: FleetPrincipal,
  member: FleetMember
): LicensePrincipal => ({
  // Per user, so one developer cannot spend the signal limits of the whole fleet.
  keyId: `${fleet.keyId}:${member.userId}`,
  orgId: fleet.orgId,
  userId: member.userId,
  plan: fleet.plan,
  environment: fleet.environment,
  sessionTimeoutS: member.sessionTimeoutS,
  timeZone: member.timeZone,
  teamIds: member.teamIds,
  ...(member.driftPrompts === undefined ? {} : { driftPrompts: member.driftPrompts })
})

/**
 * Claimed identity → the org's user: matched by e-mail in any letter case; else created as a
 * member when the org's `unknown_identities` is `create`, or refused and counted (`records` of
 * it) so the admin sees who is missing. An identity that is not an e-mail address is refused and
 * counted as well (a `$USER` name shows up in the list); a missing one is refused uncounted.
 */
export const makeFleetIdentities = Effect.gen(function*() {
  const authenticator = yield* Authenticator
  const tenancy = yield* Tenancy

  const refuse = (fleet: FleetPrincipal, identity: string, reason: string, records: number) =>
    Effect.as(tenancy.countUnknownIdentity(fleet.orgId, fleet.environment, identity, records), { _tag: "Refused", reason } as Claimed)

  const resolve = (fleet: FleetPrincipal, claimed: string | undefined, records: number): Effect.Effect<Claimed> =>
    Effect.gen(function*() {
      const problem = identityProblem(claimed)
      if (problem !== undefined) {
        if (claimed === undefined || claimed.trim() === "") return { _tag: "Refused", reason: problem } as Claimed
        return yield* refuse(fleet, claimed.trim(), `${problem}: ${claimed.trim().slice(0, 80)}`, records)
      }
      const email = claimed!.trim()
      const known = yield* authenticator.fleetMember(fleet.orgId, email)
      if (known !== undefined) return { _tag: "Member", principal: asPrincipal(fleet, known) } as Claimed
      if (fleet.unknownIdentities === "refuse") return yield* refuse(fleet, email, `${email} is no user of the org`, records)
      const created = yield* tenancy.createUser(fleet.orgId, { email, name: email.slice(0, email.indexOf("@")), role: "member" }).pipe(
        Effect.as(true),
        // Taken: made at the same time by another request, or a deactivated user's address.
        Effect.catchTag("NameTaken", () => Effect.succeed(false)),
        Effect.catchTag("UnknownReference", Effect.die)
      )
      // Either way the miss kept above is wrong now (or the address is a deactivated user's).
      yield* authenticator.forget
      const member = yield* authenticator.fleetMember(fleet.orgId, email)
      if (member === undefined) {
        return { _tag: "Refused", reason: created ? `${email} could not be made a user` : `${email} is a deactivated user` } as Claimed
      }
      return { _tag: "Member", principal: asPrincipal(fleet, member) } as Claimed
    })

  return { resolve }
})
