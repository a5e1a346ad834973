import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { auditTargetOf } from "../../../src/domain/audit.ts"
import { WebhookPayload } from "../../../src/domain/webhooks.ts"
import { ManagementApi } from "../../../src/http/management/api.ts"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../../support/harness.ts"
import { startReceiver } from "../../support/receiver.ts"
import { waitFor } from "../../support/wait.ts"
import { type RecipeContext, writeRecipes } from "./write-recipes.ts"

/** Every write endpoint of the management API, as it declares them (the route table's source). */
const writeEndpoints = Object.values(ManagementApi.groups).flatMap((group) =>
  Object.values(group.endpoints).filter((e) => e.method !== "GET").map((e) => ({ method: e.method, path: e.path, name: e.identifier }))
)

let server: TestServer
let org: Bootstrapped
let receiver: Awaited<ReturnType<typeof startReceiver>>
let keyId: string
const secrets: Array<string> = []
let n = 0
const unique = () => `audit-${Date.now().toString(36)}-${++n}`

const auditLog = async (query = "") => {
  const response = await call(server, "GET", `/api/v1/audit-log${query}`, { key: org.api_key_live! })
  expect(response.status).toBe(200)
  return response.body as { data: Array<any>; cursor: string; has_more: boolean }
}

/** The one entry written by the request with this id. */
const entryOf = async (requestId: string) => {
  const all = []
  let cursor = ""
  do {
    const page = await auditLog(`?limit=100${cursor ? `&cursor=${cursor}` : ""}`)
    all.push(...page.data)
    cursor = page.cursor
  } while (cursor !== "")
  return all.filter((e) => e.request_id === requestId)
}

beforeAll(async () => {
  receiver = await startReceiver()
  server = await startServer({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_POLL_INTERVAL: "20 millis", WEBHOOK_TIMEOUT: "1 second" } })
  org = await bootstrapOrg(server.databaseUrl, "audited", "team")
  secrets.push(org.api_key_live!, org.api_key_test, org.license_key)
  const keys = await call(server, "GET", "/api/v1/api-keys?limit=100", { key: org.api_key_live! })
  keyId = keys.body.data.find((k: { key_hint: string }) => k.key_hint.endsWith(org.api_key_live!.slice(-4))).id
})
afterAll(async () => {
  await server?.stop()
  await receiver?.close()
})

describe("an audit entry for every write endpoint", () => {
  it("the API has write endpoints, each with a recipe here (a new one needs its own)", () => {
    expect(writeEndpoints.length).toBeGreaterThan(20)
    const missing = writeEndpoints.map((e) => `${e.method} ${e.path}`).filter((k) => !(k in writeRecipes))
    expect(missing).toEqual([])
  })

  it.each(writeEndpoints.map((e) => [`${e.method} ${e.path}`, e] as const))("%s", async (label, endpoint) => {
    const recipe = writeRecipes[label]
    expect(recipe, `no audit recipe for ${label}`).toBeDefined()
    const ctx: RecipeContext = { server, org, key: org.api_key_live!, receiverUrl: receiver.url, secrets, unique }
    const { path, body } = await recipe!(ctx)
    const response = await call(server, endpoint.method, path, {
      key: org.api_key_live!,
      headers: { "user-agent": "audit-test/1.0" },
      ...(body === undefined ? {} : { body })
    })
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300)
    if (typeof response.body === "object" && typeof response.body?.key === "string") secrets.push(response.body.key)
    const requestId = response.headers.get("x-request-id")!
    const entries = await entryOf(requestId)
    expect(entries).toHaveLength(1)
    const entry = entries[0]
    const target = auditTargetOf(endpoint.path, endpoint.name)!
    const createdId = typeof response.body === "object" ? response.body?.id : undefined
    const pathId = endpoint.path.includes(":id") ? path.split("/")[4] : undefined
    expect(entry).toMatchObject({
      action: target.action,
      resource_type: target.resource,
      resource_id: target.resource === "org" || target.resource === "sso" ? org.org_id : pathId ?? createdId,
      environment: "live",
      actor: { type: "api_key", id: keyId },
      user_agent: "audit-test/1.0",
      ip: expect.stringMatching(/127\.0\.0\.1/),
      request_id: requestId
    })
    if (endpoint.name === "create") {
      expect(entry.before).toBeNull()
      expect(entry.after).toMatchObject({ id: createdId })
    } else {
      expect(entry.before).toMatchObject({ id: entry.resource_id })
    }
    if (endpoint.method === "PATCH" || endpoint.method === "PUT") expect(entry.after).not.toEqual(entry.before)
  })

  it("no entry holds a secret the tests made (keys, webhook secrets, channel URLs)", async () => {
    expect(secrets.length).toBeGreaterThan(6)
    let cursor = ""
    let text = ""
    do {
      const page = await auditLog(`?limit=100${cursor ? `&cursor=${cursor}` : ""}`)
      text += JSON.stringify(page.data)
      cursor = page.cursor
    } while (cursor !== "")
    for (const secret of secrets) expect(text).not.toContain(secret)
    expect(text).toContain("[redacted]")
  })
})

describe("what is not a change", () => {
  it("a write refused leaves no entry", async () => {
    const name = unique()
    await call(server, "POST", "/api/v1/teams", { key: org.api_key_live!, body: { name } })
    const refused = await call(server, "POST", "/api/v1/teams", { key: org.api_key_live!, body: { name } })
    expect(refused.status).toBe(409)
    expect(await entryOf(refused.headers.get("x-request-id")!)).toEqual([])
  })
})

describe("reading the audit log", () => {
  it("filters by resource, action and actor, and pages with a cursor", async () => {
    const created = await call(server, "POST", "/api/v1/projects", { key: org.api_key_live!, body: { name: unique() } })
    await call(server, "DELETE", `/api/v1/projects/${created.body.id}`, { key: org.api_key_live! })
    const forProject = await auditLog(`?resource_id=${created.body.id}`)
    expect(forProject.data.map((e) => e.action)).toEqual(["project.delete", "project.create"])
    expect((await auditLog(`?resource_id=${created.body.id}&action=project.create`)).data).toHaveLength(1)
    expect((await auditLog(`?actor_id=key_none`)).data).toEqual([])
    const first = await auditLog("?resource_type=project&limit=1")
    expect(first.has_more).toBe(true)
    const second = await auditLog(`?resource_type=project&limit=1&cursor=${first.cursor}`)
    expect(second.data[0].id < first.data[0].id).toBe(true)
    expect((await auditLog(`?from=2000-01-01&to=2000-01-02`)).data).toEqual([])
  })

  it("answers bad filters with the error envelope", async () => {
    const bad = await call(server, "GET", "/api/v1/audit-log?from=yesterday", { key: org.api_key_live! })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ code: "invalid_parameters", status: 400 })
    const cursor = await call(server, "GET", "/api/v1/audit-log?cursor=nonsense", { key: org.api_key_live! })
    expect(cursor.status).toBe(400)
  })

  it("a test key sees only the test environment's entries; a key without admin:read none", async () => {
    const viaTest = await call(server, "POST", "/api/v1/projects", { key: org.api_key_test, body: { name: unique() } })
    const test = await call(server, "GET", "/api/v1/audit-log?limit=100", { key: org.api_key_test })
    expect(test.body.data.length).toBeGreaterThan(0)
    expect(test.body.data.every((e: { environment: string }) => e.environment === "test")).toBe(true)
    expect((await auditLog(`?resource_id=${viaTest.body.id}`)).data).toHaveLength(1)
    const reader = await call(server, "POST", "/api/v1/api-keys", { key: org.api_key_live!, body: { name: unique(), scopes: ["events:read"] } })
    secrets.push(reader.body.key)
    const refused = await call(server, "GET", "/api/v1/audit-log", { key: reader.body.key })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ code: "insufficient_scope" })
  })

  it("another org's entries are not shown", async () => {
    const other = await bootstrapOrg(server.databaseUrl, "other-audited", "team")
    const mine = await call(server, "POST", "/api/v1/projects", { key: other.api_key_live!, body: { name: unique() } })
    expect((await auditLog(`?resource_id=${mine.body.id}`)).data).toEqual([])
  })
})

describe("audit.recorded webhook events", () => {
  it("a subscribed webhook gets every entry, signed like every event", async () => {
    const hook = await call(server, "POST", "/api/v1/webhooks", {
      key: org.api_key_live!,
      body: { url: receiver.url, events: ["audit.recorded"], secret: `whsec-${unique()}-0123456789abcdefghijklmnopqrstuvwxyz` }
    })
    expect(hook.status).toBe(201)
    const rule = await call(server, "POST", "/api/v1/rules", {
      key: org.api_key_live!,
      body: { name: "watched", type: "model_filter", scope: "org", scope_id: org.org_id, condition: { model: { in: ["o1"] } }, action: "log" }
    })
    const requestId = rule.headers.get("x-request-id")
    const events = await waitFor(
      async () => receiver.events().filter((e) => e.type === "audit.recorded" && e.data.request_id === requestId),
      (found) => found.length > 0,
      { what: "the audit.recorded event" }
    )
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ org_id: org.org_id, data: { action: "rule.create", resource_id: rule.body.id, after: { name: "watched" } } })
    // The body is what the published schema (schemas/webhook-payloads.schema.json) says.
    expect(() => Schema.decodeUnknownSync(WebhookPayload)(events[0])).not.toThrow()
    const delivered = receiver.received.find((r) => JSON.parse(r.body).id === events[0]!.id)!
    expect(delivered.headers["x-service-signature"]).toMatch(/^sha256=/)
  })
})
