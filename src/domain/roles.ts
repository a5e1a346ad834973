import type { Role } from "./tenancy.ts"

/**
 * What a signed-in person may do in the management API, by their user's role: one table, with a
 * row per endpoint (by its OpenAPI operationId, `group.endpoint`). API keys are not concerned:
 * they keep their scopes.
 *
 * A row names the roles besides `admin` (who may call everything) that may call the endpoint,
 * and what they see of the org's activity through it:
 * - `org`: all of it (as an admin does);
 * - `led_teams`: the activity of the users in the teams they lead (team memberships with
 *   `lead`); other rows are not found (404), as another org's are;
 * - `own`: their own activity only.
 * A role absent from a row is refused (403 insufficient_role).
 */
export type Visibility = "org" | "led_teams" | "own"

export type Grants = Readonly<Partial<Record<Exclude<Role, "admin">, Visibility>>>

/** Every role, most powerful first (the documents list them so). */
export const roles: ReadonlyArray<Role> = ["admin", "team_lead", "viewer", "member"]

/** Admins only: credentials, SSO settings and every change of the org's setup. */
const adminOnly: Grants = {}
/** Read-only, org-wide: viewers. */
const viewerRead: Grants = { viewer: "org" }
/** What people did: viewers all of it, team leads their teams', members their own. */
const activity: Grants = { viewer: "org", team_lead: "led_teams", member: "own" }
/** Read by viewers and team leads alike (rules and budgets, which a team lead's own budgets sit among). */
const ruleRead: Grants = { viewer: "org", team_lead: "org" }
/**
 * Team leads change budget rules scoped to a team they lead (the rules handlers check the rule,
 * before and after the change); every other rule is refused them.
 */
const teamBudgetWrite: Grants = { team_lead: "led_teams" }

/** Every signed-in person: the org's own settings (name, plan, time zone), which the dashboard shows everyone. */
const everyone: Grants = { viewer: "org", team_lead: "org", member: "org" }

export const endpointGrants = {
  "org.get": everyone,
  "org.update": adminOnly,
  "users.list": viewerRead,
  "users.get": viewerRead,
  "users.create": adminOnly,
  "users.update": adminOnly,
  "users.deactivate": adminOnly,
  // Team leads see the teams (and so which they lead and who is in them).
  "teams.list": { viewer: "org", team_lead: "org" },
  "teams.get": { viewer: "org", team_lead: "org" },
  "teams.create": adminOnly,
  "teams.update": adminOnly,
  "teams.delete": adminOnly,
  "projects.list": viewerRead,
  "projects.create": adminOnly,
  "projects.delete": adminOnly,
  "apiKeys.list": adminOnly,
  "apiKeys.create": adminOnly,
  "apiKeys.revoke": adminOnly,
  "licenseKeys.list": adminOnly,
  "licenseKeys.create": adminOnly,
  "licenseKeys.revoke": adminOnly,
  "sessions.list": activity,
  "sessions.get": activity,
  "sessions.events": activity,
  "events.list": activity,
  "events.get": activity,
  "webhooks.list": viewerRead,
  "webhooks.create": adminOnly,
  "webhooks.delete": adminOnly,
  "webhooks.test": adminOnly,
  "webhooks.deliveries": viewerRead,
  "webhooks.enable": adminOnly,
  "alerts.list": viewerRead,
  "webhookEvents.list": viewerRead,
  "channels.list": viewerRead,
  "channels.get": viewerRead,
  "channels.create": adminOnly,
  "channels.update": adminOnly,
  "channels.delete": adminOnly,
  "channels.test": adminOnly,
  "rules.list": ruleRead,
  "rules.get": ruleRead,
  "rules.create": teamBudgetWrite,
  "rules.update": teamBudgetWrite,
  "rules.remove": teamBudgetWrite,
  "budgets.list": ruleRead,
  "usage.report": activity,
  "goals.list": activity,
  "auditLog.list": viewerRead,
  "usageExport.export": activity,
  "reportSchedules.list": viewerRead,
  "reportSchedules.get": viewerRead,
  "reportSchedules.create": adminOnly,
  "reportSchedules.update": adminOnly,
  "reportSchedules.delete": adminOnly,
  "sso.get": adminOnly,
  "sso.update": adminOnly,
  "sso.remove": adminOnly,
  "telemetryViews.productivity": activity,
  "telemetryViews.coverage": activity,
  "fleet.list": adminOnly,
  "fleet.create": adminOnly,
  "fleet.revoke": adminOnly,
  "fleet.unknownIdentities": adminOnly
} as const satisfies Readonly<Record<string, Grants>>

export type Operation = keyof typeof endpointGrants

/**
 * What a person of `role` sees through the endpoint `operation`, or undefined when the role may
 * not call it. An endpoint missing from the table is refused to everyone but admins.
 */
export const visibilityFor = (operation: string, role: Role): Visibility | undefined => {
  if (role === "admin") return "org"
  const grants: Grants | undefined = (endpointGrants as Readonly<Record<string, Grants>>)[operation]
  return grants?.[role]
}

/** The operations a person of `role` may call (the dashboard shows what they lead to, and nothing else). */
export const operationsFor = (role: Role): ReadonlyArray<Operation> =>
  (Object.keys(endpointGrants) as Array<Operation>).filter((operation) => visibilityFor(operation, role) !== undefined)

/** The roles that may call the endpoint, most powerful first (as the OpenAPI document lists them). */
export const rolesFor = (operation: string): ReadonlyArray<Role> => roles.filter((role) => visibilityFor(operation, role) !== undefined)

/** A rule as far as a team lead's right to change it goes. */
export interface RuleReach {
  readonly type: string
  readonly scope: string
  readonly scope_id: string
}

/** Whether a team lead may create, change or delete this rule: a budget of a team they lead. */
export const teamLeadMayChange = (rule: RuleReach, ledTeams: ReadonlyArray<string>): boolean =>
  rule.type === "budget" && rule.scope === "team" && ledTeams.includes(rule.scope_id)
