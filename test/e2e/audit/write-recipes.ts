import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { call, type JsonResponse, type TestServer } from "../../support/harness.ts"

/**
 * How the audit test calls each write endpoint of the management API: what to set up first, then
 * the path and body of the call itself. Keyed by `METHOD template` as the API declares it; a write
 * endpoint without a recipe here fails the test (test/e2e/audit/audit-log.test.ts), so a new
 * endpoint cannot go unaudited unnoticed. Every secret a recipe makes is kept in `secrets`.
 */
export interface RecipeContext {
  readonly server: TestServer
  readonly org: Bootstrapped
  readonly key: string
  readonly receiverUrl: string
  readonly secrets: Array<string>
  readonly unique: () => string
}

export interface WriteCall {
  readonly path: string
  readonly body?: unknown
}

type Recipe = (ctx: RecipeContext) => Promise<WriteCall>

const created = async (ctx: RecipeContext, path: string, body: unknown): Promise<JsonResponse> => {
  const response = await call(ctx.server, "POST", `/api/v1${path}`, { key: ctx.key, body })
  if (response.status !== 201) throw new Error(`setup POST ${path}: ${response.status} ${JSON.stringify(response.body)}`)
  return response
}

const user = async (ctx: RecipeContext) => (await created(ctx, "/users", { email: `${ctx.unique()}@example.com`, name: "Audited" })).body.id as string
const team = async (ctx: RecipeContext) => (await created(ctx, "/teams", { name: ctx.unique() })).body.id as string
const webhookSecret = (ctx: RecipeContext) => {
  const secret = `whsec-${ctx.unique()}-0123456789abcdefghijklmnopqrstuvwxyz`
  ctx.secrets.push(secret)
  return secret
}
const webhook = async (ctx: RecipeContext) =>
  (await created(ctx, "/webhooks", { url: ctx.receiverUrl, events: ["rule.triggered"], secret: webhookSecret(ctx) })).body.id as string
const channelUrl = (ctx: RecipeContext) => {
  const url = `${ctx.receiverUrl}/room-${ctx.unique()}-token`
  ctx.secrets.push(url)
  return url
}
const channel = async (ctx: RecipeContext) => (await created(ctx, "/channels", { name: ctx.unique(), kind: "slack", url: channelUrl(ctx) })).body.id as string
const scheduleBody = async (ctx: RecipeContext) => ({ name: ctx.unique(), period: "weekly", channels: [await channel(ctx)] })
const schedule = async (ctx: RecipeContext) => (await created(ctx, "/report-schedules", await scheduleBody(ctx))).body.id as string
const ruleBody = (ctx: RecipeContext, name: string) => ({
  name,
  type: "model_filter",
  scope: "org",
  scope_id: ctx.org.org_id,
  condition: { model: { in: ["o3"] } },
  action: "warn"
})
const ssoBody = (ctx: RecipeContext) => {
  const secret = `sso-secret-${ctx.unique()}-0123456789abcdef`
  ctx.secrets.push(secret)
  return { issuer: "https://idp.example.com", client_id: ctx.unique(), client_secret: secret, allowed_email_domains: ["example.com"] }
}
/** The org's SSO settings are one per org, set with PUT: set them so that the call audited changes them. */
const sso = async (ctx: RecipeContext) => {
  const response = await call(ctx.server, "PUT", "/api/v1/sso", { key: ctx.key, body: ssoBody(ctx) })
  if (response.status !== 200) throw new Error(`setup PUT /sso: ${response.status} ${JSON.stringify(response.body)}`)
}
const rule = async (ctx: RecipeContext) => (await created(ctx, "/rules", ruleBody(ctx, ctx.unique()))).body.id as string
const apiKey = async (ctx: RecipeContext) => {
  const response = await created(ctx, "/api-keys", { name: ctx.unique(), scopes: ["events:read"] })
  ctx.secrets.push(response.body.key)
  return response.body.id as string
}
const licenseKey = async (ctx: RecipeContext) => {
  const response = await created(ctx, "/license-keys", { user_id: ctx.org.user_id })
  ctx.secrets.push(response.body.key)
  return response.body.id as string
}

const fleetCredential = async (ctx: RecipeContext) => {
  const response = await created(ctx, "/fleet-credentials", { name: ctx.unique() })
  ctx.secrets.push(response.body.key)
  return response.body.id as string
}

export const writeRecipes: Readonly<Record<string, Recipe>> = {
  "PATCH /api/v1/org": async () => ({ path: "/api/v1/org", body: { time_zone: "Europe/Berlin", session_timeout: 900 } }),
  "POST /api/v1/users": async (ctx) => ({ path: "/api/v1/users", body: { email: `${ctx.unique()}@example.com`, name: "New" } }),
  "PATCH /api/v1/users/:id": async (ctx) => ({ path: `/api/v1/users/${await user(ctx)}`, body: { name: "Renamed", role: "admin" } }),
  "DELETE /api/v1/users/:id": async (ctx) => ({ path: `/api/v1/users/${await user(ctx)}` }),
  "POST /api/v1/teams": async (ctx) => ({ path: "/api/v1/teams", body: { name: ctx.unique(), member_ids: [ctx.org.user_id] } }),
  "PATCH /api/v1/teams/:id": async (ctx) => ({ path: `/api/v1/teams/${await team(ctx)}`, body: { member_ids: [ctx.org.user_id] } }),
  "DELETE /api/v1/teams/:id": async (ctx) => ({ path: `/api/v1/teams/${await team(ctx)}` }),
  "POST /api/v1/projects": async (ctx) => ({ path: "/api/v1/projects", body: { name: ctx.unique() } }),
  "DELETE /api/v1/projects/:id": async (ctx) => ({
    path: `/api/v1/projects/${(await created(ctx, "/projects", { name: ctx.unique() })).body.id}`
  }),
  "POST /api/v1/api-keys": async (ctx) => ({ path: "/api/v1/api-keys", body: { name: ctx.unique(), scopes: ["events:read"] } }),
  "DELETE /api/v1/api-keys/:id": async (ctx) => ({ path: `/api/v1/api-keys/${await apiKey(ctx)}` }),
  "POST /api/v1/license-keys": async (ctx) => ({ path: "/api/v1/license-keys", body: { user_id: ctx.org.user_id } }),
  "DELETE /api/v1/license-keys/:id": async (ctx) => ({ path: `/api/v1/license-keys/${await licenseKey(ctx)}` }),
  "POST /api/v1/fleet-credentials": async (ctx) => ({ path: "/api/v1/fleet-credentials", body: { name: ctx.unique() } }),
  "DELETE /api/v1/fleet-credentials/:id": async (ctx) => ({ path: `/api/v1/fleet-credentials/${await fleetCredential(ctx)}` }),
  "POST /api/v1/webhooks": async (ctx) => ({
    path: "/api/v1/webhooks",
    body: { url: ctx.receiverUrl, events: ["budget.warning"], secret: webhookSecret(ctx) }
  }),
  "DELETE /api/v1/webhooks/:id": async (ctx) => ({ path: `/api/v1/webhooks/${await webhook(ctx)}` }),
  "POST /api/v1/webhooks/:id/test": async (ctx) => ({ path: `/api/v1/webhooks/${await webhook(ctx)}/test` }),
  "POST /api/v1/webhooks/:id/enable": async (ctx) => ({ path: `/api/v1/webhooks/${await webhook(ctx)}/enable` }),
  "POST /api/v1/channels": async (ctx) => ({ path: "/api/v1/channels", body: { name: ctx.unique(), kind: "slack", url: channelUrl(ctx) } }),
  "PATCH /api/v1/channels/:id": async (ctx) => ({ path: `/api/v1/channels/${await channel(ctx)}`, body: { url: channelUrl(ctx) } }),
  "DELETE /api/v1/channels/:id": async (ctx) => ({ path: `/api/v1/channels/${await channel(ctx)}` }),
  "POST /api/v1/channels/:id/test": async (ctx) => ({ path: `/api/v1/channels/${await channel(ctx)}/test` }),
  "POST /api/v1/rules": async (ctx) => ({ path: "/api/v1/rules", body: ruleBody(ctx, ctx.unique()) }),
  "PUT /api/v1/rules/:id": async (ctx) => ({ path: `/api/v1/rules/${await rule(ctx)}`, body: { ...ruleBody(ctx, "Renamed"), action: "log" } }),
  "DELETE /api/v1/rules/:id": async (ctx) => ({ path: `/api/v1/rules/${await rule(ctx)}` }),
  "POST /api/v1/report-schedules": async (ctx) => ({ path: "/api/v1/report-schedules", body: await scheduleBody(ctx) }),
  "PATCH /api/v1/report-schedules/:id": async (ctx) => ({
    path: `/api/v1/report-schedules/${await schedule(ctx)}`,
    body: { period: "monthly", enabled: false }
  }),
  "DELETE /api/v1/report-schedules/:id": async (ctx) => ({ path: `/api/v1/report-schedules/${await schedule(ctx)}` }),
  "PUT /api/v1/sso": async (ctx) => {
    await sso(ctx)
    return { path: "/api/v1/sso", body: ssoBody(ctx) }
  },
  "DELETE /api/v1/sso": async (ctx) => {
    await sso(ctx)
    return { path: "/api/v1/sso" }
  }
}
