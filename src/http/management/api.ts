import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Conflict, Forbidden, NotFound, Unprocessable } from "../../domain/errors.ts"
import { sessionTimeoutBounds } from "../../domain/org-settings.ts"
import { Scope } from "../../domain/scopes.ts"
import { matching } from "../../domain/text.ts"
import { ApiKey, LicenseKey, Org, Project, Role, Team, User, UserStatus } from "../../domain/tenancy.ts"
import { Envelope, KeyHousekeeping, ManagementAuth, PageQuery, pageOf, RequiredScope } from "../contract.ts"
import { EventsGroup, SessionsGroup, UsageGroupApi } from "./activity-api.ts"
import { AlertsGroup, WebhookEventsGroup, WebhooksGroup } from "./webhooks-api.ts"
import { ChannelsGroup } from "./channels-api.ts"
import { GoalsGroup } from "./goals-api.ts"
import { BudgetsGroup, RulesGroup } from "./rules-api.ts"

const Id = { id: Schema.String }
const Name = Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200)))
const Email = Schema.String.pipe(
  Schema.check(Schema.isMaxLength(320), matching(/^[^\s@]+@[^\s@]+$/, "expected an e-mail address"))
)
const Ids = Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(1000)))

// Ranges are checked by the handler, so that a value out of range is a 422 rather than a 400.
const OrgSettingsPayload = Schema.Struct({
  time_zone: Schema.optionalKey(Schema.String.annotate({
    description: "IANA time zone name, e.g. \"Europe/Berlin\" or \"UTC\"; any other string is 422"
  })),
  session_timeout: Schema.optionalKey(Schema.Int.annotate({
    description: `inactivity that ends a session, in seconds: ${sessionTimeoutBounds.minimum} to ${sessionTimeoutBounds.maximum}; ` +
      "other integers are 422"
  })),
  alert_channels: Schema.optionalKey(Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(20))).annotate({
    description: "the notification channels (ch_…, of either environment) that get the org's admin alerts: budget " +
      "warnings and exceeded, anomalies, failing webhooks and channels; each alert goes to those of its own environment. " +
      "Replaces the list; ids that are not channels of the org are 422"
  }))
}).annotate({ description: "only the fields sent change; unknown fields are rejected (400)" })

const userChangeNote = "Users and teams belong to both environments: on plans with live keys only a live key may " +
  "change them (403 live_key_required). Team budgets count a signal in the teams its user was in when it was accepted; " +
  "every node drops its cached license key lookups when a user or team changes, so a change applies to the signals accepted after it."

export class OrgGroup extends HttpApiGroup.make("org")
  .add(
    HttpApiEndpoint.get("get", "/org", { success: Org }).annotate(RequiredScope, { resource: "admin", access: "read" }),
    HttpApiEndpoint.patch("update", "/org", { payload: OrgSettingsPayload, success: Org, error: [Unprocessable, Forbidden] })
      .annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({
        description: "Sets the org's time zone, session inactivity timeout and alert channels and answers the updated org. The settings " +
          "apply to both environments: on plans with live keys only a live key may change them (403 live_key_required). Signals " +
          "take the org's settings from their license key's lookup, which every node drops when the org changes: a " +
          "change applies to the signals accepted after this answers."
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Org", description: "The organization of the API key" }))
{}

export class UsersGroup extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.get("list", "/users", { query: PageQuery, success: pageOf(User) }).annotate(RequiredScope, { resource: "admin", access: "read" }),
    HttpApiEndpoint.get("get", "/users/:id", { params: Id, success: User, error: NotFound }).annotate(RequiredScope, { resource: "admin", access: "read" }),
    HttpApiEndpoint.post("create", "/users", {
      payload: Schema.Struct({
        email: Email,
        name: Name,
        role: Schema.optional(Role),
        team_ids: Schema.optional(Ids)
      }),
      success: User.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Unprocessable]
    }).annotate(RequiredScope, { resource: "admin", access: "write" }),
    HttpApiEndpoint.patch("update", "/users/:id", {
      params: Id,
      payload: Schema.Struct({
        name: Schema.optionalKey(Name),
        role: Schema.optionalKey(Role),
        team_ids: Schema.optionalKey(Ids.annotate({ description: "the user's teams, all of them (replaces its memberships)" })),
        status: Schema.optionalKey(UserStatus.annotate({
          description: "`deactivated` offboards the user (as DELETE does); `active` reactivates it (with no keys and no teams)"
        }))
      }).annotate({ description: "only the fields sent change; unknown fields are rejected (400)" }),
      success: User,
      error: [NotFound, Conflict, Unprocessable, Forbidden]
    })
      .annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({ description: userChangeNote })),
    HttpApiEndpoint.delete("deactivate", "/users/:id", { params: Id, error: [NotFound, Forbidden] })
      .annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({
        description: "Offboards the user: revokes its license keys (both environments) and takes it out of its teams. " +
          "The user, its sessions and events stay (status `deactivated`); 204, also when it was deactivated already. " +
          userChangeNote
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Users", description: "Members of the organization" }))
{}

export class TeamsGroup extends HttpApiGroup.make("teams")
  .add(
    HttpApiEndpoint.get("list", "/teams", { query: PageQuery, success: pageOf(Team) }).annotate(RequiredScope, { resource: "admin", access: "read" }),
    HttpApiEndpoint.post("create", "/teams", {
      payload: Schema.Struct({ name: Name, member_ids: Schema.optional(Ids) }),
      success: Team.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Unprocessable]
    }).annotate(RequiredScope, { resource: "admin", access: "write" }),
    HttpApiEndpoint.get("get", "/teams/:id", { params: Id, success: Team, error: NotFound })
      .annotate(RequiredScope, { resource: "admin", access: "read" }),
    HttpApiEndpoint.patch("update", "/teams/:id", {
      params: Id,
      payload: Schema.Struct({
        name: Schema.optionalKey(Name),
        member_ids: Schema.optionalKey(Ids.annotate({ description: "the team's members, all of them (replaces them)" }))
      }).annotate({ description: "only the fields sent change; unknown fields are rejected (400)" }),
      success: Team,
      error: [NotFound, Conflict, Unprocessable, Forbidden]
    })
      .annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({ description: "Renames the team or replaces its members. " + userChangeNote })),
    HttpApiEndpoint.delete("delete", "/teams/:id", { params: Id, error: [NotFound, Conflict, Forbidden] })
      .annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({
        description: "Deletes the team and its memberships (the users stay); 204. `409 team_in_use` while a rule " +
          "(of either environment) is scoped to the team: delete or re-scope those rules first. Signals accepted " +
          "before keep counting in the team's budget windows they fell in. " + userChangeNote
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Teams" }))
{}

export class ProjectsGroup extends HttpApiGroup.make("projects")
  .add(
    HttpApiEndpoint.get("list", "/projects", { query: PageQuery, success: pageOf(Project) }).annotate(RequiredScope, { resource: "admin", access: "read" }),
    HttpApiEndpoint.post("create", "/projects", {
      payload: Schema.Struct({ name: Name }),
      success: Project.pipe(HttpApiSchema.status(201)),
      error: Conflict
    }).annotate(RequiredScope, { resource: "admin", access: "write" }),
    HttpApiEndpoint.delete("delete", "/projects/:id", { params: Id, error: [NotFound, Forbidden] })
      .annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({
        description: "Deletes the project's registration; 204. Signals, events and project rules name project_ids " +
          "as strings and are not changed. " + userChangeNote
      }))
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Projects", description: "Project ids that signals and rules refer to" }))
{}

const CreatedApiKey = Schema.Struct({
  ...ApiKey.fields,
  key: Schema.String.annotate({ description: "the key itself; shown only in this response" })
})

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.get("list", "/api-keys", { query: PageQuery, success: pageOf(ApiKey) })
      .annotate(RequiredScope, { resource: "admin", access: "read" })
      .annotate(KeyHousekeeping, true),
    HttpApiEndpoint.post("create", "/api-keys", {
      payload: Schema.Struct({
        name: Name,
        scopes: Schema.Array(Scope).pipe(Schema.check(Schema.isMinLength(1)))
      }),
      success: CreatedApiKey.pipe(HttpApiSchema.status(201)),
      error: [Unprocessable, Forbidden]
    }).annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotateMerge(OpenApi.annotations({
        description: "Creates an API key of the caller's environment with the given scopes (duplicates dropped), " +
          "each of which the calling key must hold itself (write implies read): else 403 insufficient_scope. The key is shown once."
      })),
    HttpApiEndpoint.delete("revoke", "/api-keys/:id", {
      params: Id,
      success: HttpApiSchema.NoContent,
      error: NotFound
    }).annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotate(KeyHousekeeping, true)
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({
    title: "API keys",
    description: "Keys of the caller's environment. A key is created in the environment of the key that creates it."
  }))
{}

const CreatedLicenseKey = Schema.Struct({
  ...LicenseKey.fields,
  key: Schema.String.annotate({ description: "the license key itself; shown only in this response" })
})

export class LicenseKeysGroup extends HttpApiGroup.make("licenseKeys")
  .add(
    HttpApiEndpoint.get("list", "/license-keys", { query: PageQuery, success: pageOf(LicenseKey) })
      .annotate(RequiredScope, { resource: "admin", access: "read" })
      .annotate(KeyHousekeeping, true),
    HttpApiEndpoint.post("create", "/license-keys", {
      payload: Schema.Struct({ user_id: Schema.String }),
      success: CreatedLicenseKey.pipe(HttpApiSchema.status(201)),
      error: [Unprocessable, Conflict]
    }).annotate(RequiredScope, { resource: "admin", access: "write" }),
    HttpApiEndpoint.delete("revoke", "/license-keys/:id", {
      params: Id,
      success: HttpApiSchema.NoContent,
      error: NotFound
    }).annotate(RequiredScope, { resource: "admin", access: "write" })
      .annotate(KeyHousekeeping, true)
  )
  .middleware(ManagementAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({
    title: "License keys",
    description: "Engine credentials of users, in the caller's environment"
  }))
{}

export class ManagementApi extends HttpApi.make("management")
  .add(OrgGroup, UsersGroup, TeamsGroup, ProjectsGroup, ApiKeysGroup, LicenseKeysGroup, SessionsGroup, EventsGroup)
  .add(WebhooksGroup, AlertsGroup, WebhookEventsGroup, ChannelsGroup)
  .add(RulesGroup, BudgetsGroup)
  .add(UsageGroupApi, GoalsGroup)
  .prefix("/api/v1")
  // A field this API does not know is a mistake to point out (a typo answered 200 and changed
  // nothing), so every management body refuses unknown fields with 400.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
  .annotateMerge(OpenApi.annotations({
    title: "signal-engine management API",
    version: "1.0.0",
    description: "Rules, sessions, events, webhooks and tenancy of an organization. Authenticated with API keys."
  }))
{}
