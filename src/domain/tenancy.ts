import { Schema } from "effect"
import { Environment } from "./environments.ts"
import { Plan } from "./plans.ts"
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
  created_at: Timestamp
})
export type Org = typeof Org.Type

export const Role = Schema.Literals(["admin", "member"])
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
