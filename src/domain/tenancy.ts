import { Schema } from "effect"
import { Environment } from "./environments.ts"
import { UnknownIdentities } from "./fleet.ts"
import { Plan } from "./plans.ts"
import { NotFoundRefusal, Refusal } from "./refusal.ts"
import { Scope } from "./scopes.ts"

/** Tenancy resources as the management API shows them. Timestamps are ISO 8601 strings in UTC. */
export const Timestamp = Schema.String.annotate({ description: "ISO 8601 timestamp (UTC, millisecond precision)" })

export const RateLimitWindow = Schema.Struct({
  window: Schema.Literals(["minute", "hour", "day"]),
  limit: Schema.Int
})

export const Org = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan: Plan,
  environment: Environment.annotate({ description: "the environment of the credential that made the request" }),
  session_timeout: Schema.Int.annotate({ description: "inactivity that ends a session, in seconds (default 1800)" }),
  time_zone: Schema.String,
  rate_limits: Schema.Array(RateLimitWindow),
  alert_channels: Schema.Array(Schema.String).annotate({
    description: "the notification channels that get the org's admin alerts (PATCH /org); [] until set"
  }),
  unknown_identities: UnknownIdentities.annotate({
    description: "what a fleet credential's record naming someone who is no user of the org does: `create` makes the user, " +
      "`refuse` (the default) rejects and counts it"
  }),
  drift_prompts: Schema.NullOr(Schema.Int).annotate({
    description: "off-goal prompts in a row, in one session, that make a goal drift; 0: none; null: the deployment's " +
      "`DRIFT_PROMPTS` (PATCH /org)"
  }),
  created_at: Timestamp
})
export type Org = typeof Org.Type

export const Role = Schema.Literals(["admin", "team_lead", "viewer", "member"]).annotate({
  description: "what the user may do when signed in to the dashboard (README \"Single sign-on, roles and audit\"): `admin` " +
    "everything; `team_lead` read the activity and spend of the teams they lead (`lead_ids` of a team) and manage those " +
    "teams' budgets; `viewer` read-only, org-wide, without credentials and SSO settings; `member` their own activity only. " +
    "API keys keep their scopes whatever the role"
})
export type Role = typeof Role.Type

export const UserStatus = Schema.Literals(["active", "deactivated"])
export type UserStatus = typeof UserStatus.Type

export const User = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  role: Role,
  team_ids: Schema.Array(Schema.String),
  status: UserStatus.annotate({
    description: "`deactivated`: offboarded; the user's license keys were revoked and teams left, its activity stays"
  }),
  deactivated_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
})
export type User = typeof User.Type

export const Team = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  member_ids: Schema.Array(Schema.String),
  lead_ids: Schema.Array(Schema.String).annotate({
    description: "the members who lead the team: a user with the `team_lead` role sees the activity of the teams they lead"
  }),
  created_at: Timestamp
})
export type Team = typeof Team.Type

export const Project = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  created_at: Timestamp
})
export type Project = typeof Project.Type

export const ApiKey = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  environment: Environment,
  scopes: Schema.Array(Scope),
  key_hint: Schema.String,
  created_at: Timestamp,
  revoked_at: Schema.NullOr(Timestamp)
})
export type ApiKey = typeof ApiKey.Type

export const LicenseKey = Schema.Struct({
  id: Schema.String,
  user_id: Schema.String,
  environment: Environment,
  key_hint: Schema.String,
  created_at: Timestamp,
  revoked_at: Schema.NullOr(Timestamp)
})
export type LicenseKey = typeof LicenseKey.Type

/* The refusals of tenancy requests (src/domain/refusal.ts). */

export class OrgNotFound extends Refusal("OrgNotFound", 404, "not_found") {
  /** `name`: the org was looked for by id or name (the CLI's way). */
  constructor(idOrName: string, by: "id" | "name" = "id") {
    super(by === "id" ? `org ${idOrName} not found` : `no org with id or name ${idOrName}`)
  }
}

export class UserNotFound extends NotFoundRefusal("UserNotFound", "user") {}

export class TeamNotFound extends NotFoundRefusal("TeamNotFound", "team") {}

export class ProjectNotFound extends NotFoundRefusal("ProjectNotFound", "project") {}

export class KeyNotFound extends NotFoundRefusal("KeyNotFound", "key") {}

/** A unique name (a user's e-mail, a team's or project's name) is taken; `what` names it. */
export class NameTaken extends Refusal("NameTaken", 409, "already_exists") {
  constructor(what: string) {
    super(`${what} already exists`)
  }
}

/** Ids in a request that are not of the org (`field` is the request's field). */
export class UnknownReference extends Refusal("UnknownReference", 422, "unknown_reference") {
  constructor(field: "team_ids" | "member_ids" | "lead_ids" | "user_id", ids: ReadonlyArray<string>) {
    super(`unknown ${field}: ${ids.join(", ")}`)
  }
}

/** A deactivated user was asked to be in a team or to get a key. */
export class UserDeactivated extends Refusal("UserDeactivated", 409, "user_deactivated") {
  static asMembers(userIds: ReadonlyArray<string>) {
    return new UserDeactivated(`deactivated user(s) cannot be team members: ${userIds.join(", ")}`)
  }
  static inTeams(userId: string) {
    return new UserDeactivated(`user ${userId} is deactivated and can be in no team; reactivate it first`)
  }
  static forKey(userId: string) {
    return new UserDeactivated(`user ${userId} is deactivated; reactivate it before giving it a key`)
  }
}

/** A team cannot go while rules are scoped to it. */
export class TeamInUse extends Refusal("TeamInUse", 409, "team_in_use") {
  constructor(teamId: string, ruleIds: ReadonlyArray<string>) {
    super(`rules are scoped to team ${teamId}: ${ruleIds.join(", ")}; delete or re-scope them first`)
  }
}

export class LiveKeysNotOnPlan extends Refusal("LiveKeysNotOnPlan", 422, "plan_requires_test_keys") {
  constructor(plan: Plan) {
    super(`live keys require the team plan or higher; this org is on ${plan}`)
  }
}
