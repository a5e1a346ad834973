import { Schema } from "effect"
import type { HttpRouter } from "effect/http"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Conflict, Forbidden, NotFound, Unprocessable } from "../../domain/errors.ts"
import { driftPromptsBounds, sessionTimeoutBounds } from "../../domain/org-settings.ts"
import { Scope } from "../../domain/scopes.ts"
import { matching } from "../../domain/text.ts"
import { UnknownIdentities } from "../../domain/fleet.ts"
import { ApiKey, LicenseKey, Org, Project, Role, Team, User, UserStatus } from "../../domain/tenancy.ts"
import { KeyHousekeeping } from "../contract.ts"
import { EventsGroup, SessionsGroup, UsageGroupApi } from "./activity-api.ts"
import { TelemetryViewsGroup } from "./telemetry-views-api.ts"
import { AlertsGroup, WebhookEventsGroup, WebhooksGroup } from "./webhooks-api.ts"
import { ChannelsGroup } from "./channels-api.ts"
import { GoalsGroup } from "./goals-api.ts"
import { AuditLogGroup } from "./audit-api.ts"
import { UsageExportGroup } from "./usage-export-api.ts"
import { ReportSchedulesGroup } from "./report-schedules-api.ts"
import { SsoGroup } from "./sso-api.ts"
import { FleetGroup } from "./fleet-api.ts"
import { BudgetsGroup, RulesGroup } from "./rules-api.ts"
import { documentRoles, getEndpoint, IdParams, listEndpoint, managementGroup, Name, requires } from "./endpoints.ts"

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
  drift_prompts: Schema.optionalKey(
    Schema.NullOr(Schema.Int).annotate({
      description: `off-goal prompts in a row, in one session, that make a goal drift (a \`goal-drift\` signal and the ` +
        `warning on that prompt): ${driftPromptsBounds.minimum} to ${driftPromptsBounds.maximum}, 0 for no goal drift in ` +
        "the org; null for the deployment's `DRIFT_PROMPTS` (3 unless set). Applies to the signals accepted after it; other " +
        "integers are 422"
    })
  ),
  alert_channels: Schema.optionalKey(
    Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(20))).annotate({
      description: "the notification channels (ch_…, of either environment) that get the org's admin alerts: budget " +
        "warnings and exceeded, anomalies, failing webhooks and channels; each alert goes to those of its own environment. " +
        "Replaces the list; ids that are not channels of the org are 422"
    })
  ),
  unknown_identities: Schema.optionalKey(UnknownIdentities.annotate({
    description: "what a fleet credential's record or hook call naming someone who is no user of the org does: `create` " +
      "makes the user (a member, named by the e-mail's local part), `refuse` rejects it and counts it in GET " +
      "/fleet/unknown-identities"
  }))
}).annotate({ description: "only the fields sent change; unknown fields are rejected (400)" })

const LeadIds = Ids.annotate({
  description: "the members who lead the team, all of them (replaces them); each must be a member (else 422 unknown_reference). " +
    "When absent, the leads who stay members stay leads"
})

const userChangeNote = "Users and teams belong to both environments: on plans with live keys only a live key may " +
  "change them (403 live_key_required). Team budgets count a signal in the teams its user was in when it was accepted; " +
  "every node drops its cached license key lookups when a user or team changes, so a change applies to the signals accepted after it."

export class OrgGroup extends HttpApiGroup.make("org")
  .add(
    HttpApiEndpoint.get("get", "/org", { success: Org }).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.patch("update", "/org", { payload: OrgSettingsPayload, success: Org, error: [Unprocessable, Forbidden] })
      .annotateMerge(requires(
        "admin",
        "write",
        "Sets the org's time zone, session inactivity timeout and alert channels and answers the updated org. The settings " +
          "apply to both environments: on plans with live keys only a live key may change them (403 live_key_required). Signals " +
          "take the org's settings from their license key's lookup, which every node drops when the org changes: a " +
          "change applies to the signals accepted after this answers."
      ))
  )
  .pipe(managementGroup({ title: "Org", description: "The organization of the API key" }))
{}

export class UsersGroup extends HttpApiGroup.make("users")
  .add(
    listEndpoint("/users", User).annotateMerge(requires("admin", "read")),
    getEndpoint("/users/:id", User).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.post("create", "/users", {
      payload: Schema.Struct({
        email: Email,
        name: Name,
        role: Schema.optional(Role),
        team_ids: Schema.optional(Ids)
      }),
      success: User.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Unprocessable]
    }).annotateMerge(requires("admin", "write")),
    HttpApiEndpoint.patch("update", "/users/:id", {
      params: IdParams,
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
    }).annotateMerge(requires("admin", "write", userChangeNote)),
    HttpApiEndpoint.delete("deactivate", "/users/:id", { params: IdParams, error: [NotFound, Forbidden] })
      .annotateMerge(requires(
        "admin",
        "write",
        "Offboards the user: revokes its license keys (both environments) and takes it out of its teams. " +
          "The user, its sessions and events stay (status `deactivated`); 204, also when it was deactivated already. " +
          userChangeNote
      ))
  )
  .pipe(managementGroup({ title: "Users", description: "Members of the organization" }))
{}

export class TeamsGroup extends HttpApiGroup.make("teams")
  .add(
    listEndpoint("/teams", Team).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.post("create", "/teams", {
      payload: Schema.Struct({ name: Name, member_ids: Schema.optional(Ids), lead_ids: Schema.optional(LeadIds) }),
      success: Team.pipe(HttpApiSchema.status(201)),
      error: [Conflict, Unprocessable]
    }).annotateMerge(requires("admin", "write")),
    getEndpoint("/teams/:id", Team).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.patch("update", "/teams/:id", {
      params: IdParams,
      payload: Schema.Struct({
        name: Schema.optionalKey(Name),
        member_ids: Schema.optionalKey(Ids.annotate({ description: "the team's members, all of them (replaces them)" })),
        lead_ids: Schema.optionalKey(LeadIds)
      }).annotate({ description: "only the fields sent change; unknown fields are rejected (400)" }),
      success: Team,
      error: [NotFound, Conflict, Unprocessable, Forbidden]
    }).annotateMerge(requires("admin", "write", "Renames the team or replaces its members. " + userChangeNote)),
    HttpApiEndpoint.delete("delete", "/teams/:id", { params: IdParams, error: [NotFound, Conflict, Forbidden] })
      .annotateMerge(requires(
        "admin",
        "write",
        "Deletes the team and its memberships (the users stay); 204. `409 team_in_use` while a rule " +
          "(of either environment) is scoped to the team: delete or re-scope those rules first. Signals accepted " +
          "before keep counting in the team's budget windows they fell in. " + userChangeNote
      ))
  )
  .pipe(managementGroup({ title: "Teams" }))
{}

export class ProjectsGroup extends HttpApiGroup.make("projects")
  .add(
    listEndpoint("/projects", Project).annotateMerge(requires("admin", "read")),
    HttpApiEndpoint.post("create", "/projects", {
      payload: Schema.Struct({ name: Name }),
      success: Project.pipe(HttpApiSchema.status(201)),
      error: Conflict
    }).annotateMerge(requires("admin", "write")),
    HttpApiEndpoint.delete("delete", "/projects/:id", { params: IdParams, error: [NotFound, Forbidden] })
      .annotateMerge(requires(
        "admin",
        "write",
        "Deletes the project's registration; 204. Signals, events and project rules name project_ids " +
          "as strings and are not changed. " + userChangeNote
      ))
  )
  .pipe(managementGroup({ title: "Projects", description: "Project ids that signals and rules refer to" }))
{}

/** A key as the answer to its creation shows it: with the key itself, which nothing shows again. */
const withKey = <F extends Schema.Struct.Fields>(fields: F, description: string) => Schema.Struct({ ...fields, key: Schema.String.annotate({ description }) })

/**
 * The list and the revocation of a kind of key, which a live key may still call after its org's
 * plan lost live keys (KeyHousekeeping), so that a leaked one can be found and revoked.
 */
const keyList = <const Path extends HttpRouter.PathInput, S extends Schema.Top>(path: Path, key: S) =>
  listEndpoint(path, key).annotateMerge(requires("admin", "read")).annotate(KeyHousekeeping, true)
const keyRevoke = <const Path extends HttpRouter.PathInput>(path: Path) =>
  HttpApiEndpoint.delete("revoke", path, { params: IdParams, success: HttpApiSchema.NoContent, error: NotFound })
    .annotateMerge(requires("admin", "write"))
    .annotate(KeyHousekeeping, true)

export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    keyList("/api-keys", ApiKey),
    HttpApiEndpoint.post("create", "/api-keys", {
      payload: Schema.Struct({
        name: Name,
        scopes: Schema.Array(Scope).pipe(Schema.check(Schema.isMinLength(1)))
      }),
      success: withKey(ApiKey.fields, "the key itself; shown only in this response").pipe(HttpApiSchema.status(201)),
      error: [Unprocessable, Forbidden]
    }).annotateMerge(requires(
      "admin",
      "write",
      "Creates an API key of the caller's environment with the given scopes (duplicates dropped), " +
        "each of which the calling key must hold itself (write implies read): else 403 insufficient_scope. The key is shown once."
    )),
    keyRevoke("/api-keys/:id")
  )
  .pipe(managementGroup({
    title: "API keys",
    description: "Keys of the caller's environment. A key is created in the environment of the key that creates it."
  }))
{}

export class LicenseKeysGroup extends HttpApiGroup.make("licenseKeys")
  .add(
    keyList("/license-keys", LicenseKey),
    HttpApiEndpoint.post("create", "/license-keys", {
      payload: Schema.Struct({ user_id: Schema.String }),
      success: withKey(LicenseKey.fields, "the license key itself; shown only in this response").pipe(HttpApiSchema.status(201)),
      error: [Unprocessable, Conflict]
    }).annotateMerge(requires("admin", "write")),
    keyRevoke("/license-keys/:id")
  )
  .pipe(managementGroup({ title: "License keys", description: "Engine credentials of users, in the caller's environment" }))
{}
export class ManagementApi extends HttpApi.make("management")
  .add(OrgGroup, UsersGroup, TeamsGroup, ProjectsGroup, ApiKeysGroup, LicenseKeysGroup, SessionsGroup, EventsGroup)
  .add(WebhooksGroup, AlertsGroup, WebhookEventsGroup, ChannelsGroup)
  .add(RulesGroup, BudgetsGroup)
  .add(UsageGroupApi, GoalsGroup)
  .add(AuditLogGroup)
  .add(UsageExportGroup)
  .add(ReportSchedulesGroup)
  .add(SsoGroup)
  .add(TelemetryViewsGroup)
  .add(FleetGroup)
  .prefix("/api/v1")
  // A field this API does not know is a mistake to point out (a typo answered 200 and changed
  // nothing), so every management body refuses unknown fields with 400.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
  .annotateMerge(OpenApi.annotations({
    title: "signal-engine management API",
    version: "1.0.0",
    description: "Rules, sessions, events, webhooks and tenancy of an organization. Authenticated with API keys.",
    transform: documentRoles
  }))
{}
