import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Environment } from "../domain/environments.ts"
import { allowsLiveKeys, type Plan } from "../domain/plans.ts"
import { allScopes } from "../domain/scopes.ts"
import { type Fleet, makeFleet } from "./fleet-repo.ts"
import { type KeyAuthentication, makeKeyAuthentication } from "./key-authentication.ts"
import { type Keys, makeKeys } from "./keys-repo.ts"
import { makeOrgs, type Orgs } from "./orgs-repo.ts"
import { makePeople, type People } from "./people-repo.ts"
import { makePrincipalChanges, type PrincipalChanges } from "./principal-changes.ts"
import { makeProjects, type Projects } from "./projects-repo.ts"

export type { OrgRecord } from "./orgs-repo.ts"
export type { UserChanges } from "./people-repo.ts"
export type { PageRequest } from "./tenancy-sql.ts"

export interface Bootstrapped {
  readonly org_id: string
  readonly user_id: string
  readonly team_id: string
  readonly api_key_live: string | null
  readonly api_key_test: string
  readonly license_key: string
  readonly license_key_environment: Environment
}

/**
 * Orgs, users, teams, projects and credentials, one service over the repositories of each
 * (orgs-repo, people-repo, projects-repo, keys-repo, key-authentication, principal-changes).
 * SQL failures are defects there: nothing a caller could do about them; the refusals a caller
 * can act on are the domain's (src/domain/tenancy.ts).
 */
export class Tenancy extends Context.Service<
  Tenancy,
  Orgs & People & Projects & Keys & Fleet & KeyAuthentication & PrincipalChanges & {
    /** A new org with an admin, a team and keys of each kind, in one transaction (the demo, the CLI). */
    readonly bootstrap: (input: { readonly org: string; readonly plan: Plan; readonly apiKeyPrefix: string }) => Effect.Effect<Bootstrapped>
  }
>()("signal-engine/store/Tenancy") {
  static readonly layer = (options: { readonly apiKeyPrefix: string }) =>
    Layer.effect(
      Tenancy,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const orgs = yield* makeOrgs
        const people = yield* makePeople
        const projects = yield* makeProjects
        const keys = yield* makeKeys(orgs, options)
        const fleet = yield* makeFleet(orgs)
        const authentication = yield* makeKeyAuthentication
        const listen = yield* makePrincipalChanges

        const bootstrap = Effect.fn("Tenancy.bootstrap")(function*(
          input: { readonly org: string; readonly plan: Plan; readonly apiKeyPrefix: string }
        ) {
          return yield* sql.withTransaction(Effect.gen(function*() {
            const org = yield* orgs.createOrg({ name: input.org, plan: input.plan })
            const admin = yield* people.createUser(org.id, { email: "admin@localhost", name: "Admin", role: "admin" })
            const team = yield* people.createTeam(org.id, { name: "Default", member_ids: [admin.id] })
            const live = allowsLiveKeys(input.plan)
              ? (yield* keys.createApiKey(org.id, { environment: "live", name: "bootstrap (live)", scopes: allScopes })).key
              : null
            const test = (yield* keys.createApiKey(org.id, { environment: "test", name: "bootstrap (test)", scopes: allScopes })).key
            const licenseEnvironment: Environment = allowsLiveKeys(input.plan) ? "live" : "test"
            const license = yield* keys.createLicenseKey(org.id, { environment: licenseEnvironment, user_id: admin.id })
            return {
              org_id: org.id,
              user_id: admin.id,
              team_id: team.id,
              api_key_live: live,
              api_key_test: test,
              license_key: license.key,
              license_key_environment: licenseEnvironment
            } satisfies Bootstrapped
          })).pipe(Effect.orDie)
        })

        return Tenancy.of({
          ...orgs,
          ...people,
          ...projects,
          ...keys,
          ...fleet,
          ...authentication,
          ...listen,
          bootstrap
        })
      })
    )
}
