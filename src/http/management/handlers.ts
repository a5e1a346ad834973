import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Forbidden, NotFound, Unprocessable } from "../../domain/errors.ts"
import { IdPrefix } from "../../domain/ids.ts"
import { validateOrgSettings } from "../../domain/org-settings.ts"
import { defaultPageSize } from "../../domain/pagination.ts"
import { allowsLiveKeys, managementRateWindows } from "../../domain/plans.ts"
import type { ApiKeyPrincipal } from "../../domain/principal.ts"
import { holdsScope } from "../../domain/scopes.ts"
import type { Org } from "../../domain/tenancy.ts"
import { type OrgRecord, Tenancy } from "../../store/tenancy-repo.ts"
import { ApiPrincipal } from "../contract.ts"
import { type OnTheWire, serviceOnTheWire } from "../refusals.ts"
import { EventsHandlers, SessionsHandlers, UsageHandlers } from "./activity-handlers.ts"
import { TelemetryViewsHandlers } from "./telemetry-views-handlers.ts"
import { AlertsHandlers, WebhookEventsHandlers, WebhooksHandlers } from "./webhooks-handlers.ts"
import { ChannelsHandlers } from "./channels-handlers.ts"
import { Channels } from "../../store/channels-repo.ts"
import { ManagementApi } from "./api.ts"
import { BudgetsHandlers, RulesHandlers } from "./rules-handlers.ts"
import { GoalsHandlers } from "./goals-handlers.ts"
import { AuditLogHandlers } from "./audit-handlers.ts"
import { UsageExportHandlers } from "./usage-export-handlers.ts"
import { ReportSchedulesHandlers } from "./report-schedules-handlers.ts"
import { SsoHandlers } from "./sso-handlers.ts"
import { FleetHandlers } from "./fleet-handlers.ts"

const page = (query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) => ({
  limit: query.limit ?? defaultPageSize,
  cursor: query.cursor
})

/** The org as GET and PATCH /org show it: the stored row seen through the calling key. */
const orgView = (principal: ApiKeyPrincipal, org: OrgRecord, alertChannels: ReadonlyArray<string>): Org => ({
  id: org.id,
  name: org.name,
  plan: org.plan,
  environment: principal.environment,
  session_timeout: org.session_timeout_s,
  time_zone: org.time_zone,
  rate_limits: managementRateWindows(principal.plan, principal.rateLimits).map((w) => ({ window: w.name, limit: w.limit })),
  alert_channels: [...alertChannels],
  unknown_identities: org.unknown_identities,
  drift_prompts: org.drift_prompts,
  created_at: org.created_at
})

/**
 * Org settings, users and teams belong to both environments. Where the plan has live keys, a test
 * key (handed to CI, to a staging adapter) cannot change what live signals are counted under.
 */
const liveKeyForBothEnvironments = Effect.gen(function*() {
  const principal = yield* ApiPrincipal
  if (principal.environment === "test" && allowsLiveKeys(principal.plan)) {
    return yield* Forbidden.of("this applies to both environments; change it with a live key", "live_key_required")
  }
})

export const OrgHandlers = HttpApiBuilder.group(
  ManagementApi,
  "org",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    const channels = serviceOnTheWire(yield* Channels)
    return handlers
      .handle("get", () =>
        Effect.gen(function*() {
          const principal = yield* ApiPrincipal
          const org = yield* tenancy.getOrg(principal.orgId).pipe(Effect.orDie)
          return orgView(principal, org, yield* channels.alertChannels(principal.orgId))
        }))
      .handle("update", ({ payload }) =>
        Effect.gen(function*() {
          yield* liveKeyForBothEnvironments
          const principal = yield* ApiPrincipal
          const { alert_channels, unknown_identities, ...rest } = payload
          const settings = validateOrgSettings(rest)
          if ("problems" in settings) return yield* Unprocessable.of(settings.problems.join("; "), "validation_error")
          const alertChannels = alert_channels === undefined
            ? yield* channels.alertChannels(principal.orgId)
            : yield* channels.setAlertChannels(principal.orgId, alert_channels)
          if (unknown_identities !== undefined) yield* tenancy.setUnknownIdentities(principal.orgId, unknown_identities)
          const org = yield* tenancy.updateOrg(principal.orgId, settings.ok).pipe(Effect.orDie)
          return orgView(principal, org, alertChannels)
        }))
  })
)

export const UsersHandlers = HttpApiBuilder.group(
  ManagementApi,
  "users",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => tenancy.listUsers(p.orgId, page(query))))
      .handle("get", ({ params }) => ApiPrincipal.use((p) => tenancy.getUser(p.orgId, params.id)))
      .handle("create", ({ payload }) => ApiPrincipal.use((p) => tenancy.createUser(p.orgId, { ...payload, role: payload.role ?? "member" })))
      .handle(
        "update",
        ({ params, payload }) => Effect.andThen(liveKeyForBothEnvironments, ApiPrincipal.use((p) => tenancy.updateUser(p.orgId, params.id, payload)))
      )
      .handle("deactivate", ({ params }) =>
        Effect.andThen(
          liveKeyForBothEnvironments,
          ApiPrincipal.use((p) =>
            tenancy.updateUser(p.orgId, params.id, { status: "deactivated" }).pipe(
              // Deactivating touches no team list, so nothing else can conflict.
              Effect.catchTags({ Conflict: Effect.die, Unprocessable: Effect.die }),
              Effect.asVoid
            )
          )
        ))
  })
)

export const TeamsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "teams",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => tenancy.listTeams(p.orgId, page(query))))
      .handle("create", ({ payload }) => ApiPrincipal.use((p) => tenancy.createTeam(p.orgId, payload)))
      .handle("get", ({ params }) => ApiPrincipal.use((p) => tenancy.getTeam(p.orgId, params.id)))
      .handle(
        "update",
        ({ params, payload }) => Effect.andThen(liveKeyForBothEnvironments, ApiPrincipal.use((p) => tenancy.updateTeam(p.orgId, params.id, payload)))
      )
      .handle("delete", ({ params }) => Effect.andThen(liveKeyForBothEnvironments, ApiPrincipal.use((p) => tenancy.deleteTeam(p.orgId, params.id))))
  })
)

export const ProjectsHandlers = HttpApiBuilder.group(
  ManagementApi,
  "projects",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => tenancy.listProjects(p.orgId, page(query))))
      .handle("create", ({ payload }) => ApiPrincipal.use((p) => tenancy.createProject(p.orgId, payload)))
      .handle("delete", ({ params }) => Effect.andThen(liveKeyForBothEnvironments, ApiPrincipal.use((p) => tenancy.deleteProject(p.orgId, params.id))))
  })
)

/** Revokes a key of the caller's environment by its id, which must be of the kind the path names. */
const revoke = (tenancy: OnTheWire<Tenancy["Service"]>, id: string, prefix: string, kind: string) =>
  ApiPrincipal.use((p) =>
    id.startsWith(`${prefix}_`)
      ? tenancy.revokeKey(id, { orgId: p.orgId, environment: p.environment })
      : Effect.fail(NotFound.of(`${kind} ${id} not found`))
  )

export const ApiKeysHandlers = HttpApiBuilder.group(
  ManagementApi,
  "apiKeys",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => tenancy.listApiKeys(p.orgId, p.environment, page(query))))
      .handle("create", ({ payload }) =>
        ApiPrincipal.use((p) =>
          Effect.gen(function*() {
            // A key hands out only what it holds itself: an admin:write key is not every scope.
            const scopes = [...new Set(payload.scopes)]
            const beyond = scopes.filter((scope) => !holdsScope(p.scopes, scope))
            if (beyond.length > 0) {
              return yield* Forbidden.of(`a key can grant only scopes it has itself; this one lacks ${beyond.join(", ")}`, "insufficient_scope")
            }
            const { key, record } = yield* tenancy.createApiKey(p.orgId, { environment: p.environment, name: payload.name, scopes }).pipe(
              Effect.catchTag("NotFound", Effect.die)
            )
            return { ...record, key }
          })
        ))
      .handle("revoke", ({ params }) => revoke(tenancy, params.id, IdPrefix.apiKey, "API key"))
  })
)

export const LicenseKeysHandlers = HttpApiBuilder.group(
  ManagementApi,
  "licenseKeys",
  Effect.fn(function*(handlers) {
    const tenancy = serviceOnTheWire(yield* Tenancy)
    return handlers
      .handle("list", ({ query }) => ApiPrincipal.use((p) => tenancy.listLicenseKeys(p.orgId, p.environment, page(query))))
      .handle(
        "create",
        ({ payload }) =>
          ApiPrincipal.use((p) =>
            tenancy.createLicenseKey(p.orgId, { environment: p.environment, user_id: payload.user_id }).pipe(
              Effect.map(({ key, record }) => ({ ...record, key })),
              Effect.catchTag("NotFound", Effect.die)
            )
          )
      )
      .handle("revoke", ({ params }) => revoke(tenancy, params.id, IdPrefix.licenseKey, "license key"))
  })
)

export const ManagementHandlers = Layer.mergeAll(
  WebhooksHandlers,
  AlertsHandlers,
  ChannelsHandlers,
  WebhookEventsHandlers,
  RulesHandlers,
  BudgetsHandlers,
  OrgHandlers,
  UsersHandlers,
  TeamsHandlers,
  ProjectsHandlers,
  ApiKeysHandlers,
  LicenseKeysHandlers,
  SessionsHandlers,
  EventsHandlers,
  UsageHandlers,
  GoalsHandlers,
  AuditLogHandlers,
  UsageExportHandlers,
  ReportSchedulesHandlers,
  SsoHandlers,
  TelemetryViewsHandlers,
  FleetHandlers
)
