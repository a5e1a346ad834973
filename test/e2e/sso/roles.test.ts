import { createHash, randomBytes } from "node:crypto"
import { OpenApi } from "effect/http-api"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { roles, rolesFor } from "../../../src/domain/roles.ts"
import type { Role } from "../../../src/domain/tenancy.ts"
import { ManagementApi } from "../../../src/http/management/api.ts"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer } from "../../support/harness.ts"

/**
 * What each role may do through a signed-in person's session: every management endpoint × every
 * role (from the API's own operations, so a new endpoint is covered as soon as it exists), and
 * what team leads and members see of the org's activity.
 */

let server: TestServer
let org: Bootstrapped
let db: pg.Client
let live: string
const people = {} as Record<"admin" | "viewer" | "lead" | "mate" | "other", { id: string; key?: string; session?: string }>
const teams = {} as Record<"led" | "otherTeam", string>
const sessionOf = {} as Record<"lead" | "mate" | "other", string>

/** A session as sign-in makes one (the database keeps only the id's hash). */
const sessionFor = async (userId: string) => {
  const id = randomBytes(32).toString("base64url")
  const csrf = randomBytes(32).toString("base64url")
  await db.query(
    `INSERT INTO dashboard_sessions (id_hash, org_id, user_id, csrf_token, expires_at)
     VALUES ($1, $2, $3, $4, now() + interval '1 hour')`,
    [createHash("sha256").update(id).digest("base64url"), org.org_id, userId, csrf]
  )
  return { cookie: `se_session=${id}`, "x-csrf-token": csrf }
}
const sessions = {} as Record<Role | "lead" | "mate", Record<string, string>>

const as = (who: keyof typeof sessions, method: string, path: string, body?: unknown) =>
  call(server, method, path, { headers: { ...sessions[who], origin: server.baseUrl }, ...(body === undefined ? {} : { body }) })

const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: res.headers.get("x-request-id") })
}

const user = async (name: string, role: Role, teamIds: Array<string> = []) => {
  const made = await call(server, "POST", "/api/v1/users", {
    key: live,
    body: { email: `${name}@roles.example.com`, name, role, team_ids: teamIds }
  })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  return made.body.id as string
}

const signalFrom = async (userId: string) => {
  const license = await call(server, "POST", "/api/v1/license-keys", { key: live, body: { user_id: userId } })
  const sent = await call(server, "POST", "/engine/v1/signals", {
    key: license.body.key,
    body: { type: "post-tool", adapter: "cursor", session_id: `s-${userId}`, metadata: { tokens_in: 10, tokens_out: 1 } }
  })
  expect(sent.status, JSON.stringify(sent.body)).toBe(200)
  return sent.body.session_id as string
}

beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "roles", "team")
  live = org.api_key_live!
  db = new pg.Client({ connectionString: server.databaseUrl })
  await db.connect()
  teams.led = (await call(server, "POST", "/api/v1/teams", { key: live, body: { name: "Led" } })).body.id
  teams.otherTeam = (await call(server, "POST", "/api/v1/teams", { key: live, body: { name: "Other" } })).body.id
  people.admin = { id: await user("admin", "admin") }
  people.viewer = { id: await user("viewer", "viewer") }
  people.lead = { id: await user("lead", "team_lead", [teams.led]) }
  people.mate = { id: await user("mate", "member", [teams.led]) }
  people.other = { id: await user("other", "member", [teams.otherTeam]) }
  const led = await call(server, "PATCH", `/api/v1/teams/${teams.led}`, { key: live, body: { lead_ids: [people.lead.id] } })
  expect(led.body).toMatchObject({ member_ids: [people.lead.id, people.mate.id].sort(), lead_ids: [people.lead.id] })
  for (const who of ["lead", "mate", "other"] as const) sessionOf[who] = await signalFrom(people[who].id)
  sessions.admin = await sessionFor(people.admin.id)
  sessions.viewer = await sessionFor(people.viewer.id)
  sessions.team_lead = await sessionFor(people.lead.id)
  sessions.lead = sessions.team_lead
  sessions.member = await sessionFor(people.mate.id)
  sessions.mate = sessions.member
})
afterAll(async () => {
  await db?.end()
  await server?.stop()
})

/** Every management operation, as the document generated from the API's groups lists them. */
const operations = Object.entries(OpenApi.fromApi(ManagementApi).paths).flatMap(([path, item]) =>
  Object.entries(item as Record<string, { operationId: string }>).map(([method, op]) => ({
    method: method.toUpperCase(),
    // A made-up id: the role is checked before anything is looked up.
    path: path.replace(/\{[^}]+\}/g, "nothing_here"),
    operationId: op.operationId
  }))
)

describe("every management endpoint × every role", () => {
  it("covers the whole API", () => {
    expect(operations.length).toBeGreaterThan(60)
  })

  for (const role of roles) {
    it(`${role}: allowed where the role table says, else 403 insufficient_role`, async () => {
      for (const op of operations) {
        const res = await as(role, op.method, op.path, op.method === "GET" ? undefined : {})
        const label = `${role} ${op.method} ${op.path} → ${res.status} ${JSON.stringify(res.body)}`
        if (rolesFor(op.operationId).includes(role)) {
          expect(res.status === 403 && res.body?.code === "insufficient_role", label).toBe(false)
          expect(res.status, label).not.toBe(401)
        } else {
          expectEnvelope(res, 403, "insufficient_role")
        }
      }
    })
  }

  it("a viewer changes nothing: every write is 403 insufficient_role", async () => {
    for (const op of operations.filter((o) => o.method !== "GET")) {
      expectEnvelope(await as("viewer", op.method, op.path, {}), 403, "insufficient_role")
    }
  })
})

const sessionIds = (res: JsonResponse) => (res.body.data as Array<{ id: string }>).map((s) => s.id).sort()

describe("what each role sees of the activity", () => {
  it("a viewer and an admin see everyone's sessions", async () => {
    for (const who of ["viewer", "admin"] as const) {
      expect(sessionIds(await as(who, "GET", "/api/v1/sessions?limit=100"))).toEqual(Object.values(sessionOf).sort())
    }
  })

  it("a team lead sees their teams' sessions, events and usage; another team's session is 404", async () => {
    const mine = [sessionOf.lead, sessionOf.mate].sort()
    const list = await as("lead", "GET", "/api/v1/sessions?limit=100")
    expect(sessionIds(list)).toEqual(mine)
    expect(list.body.total).toBe(2)
    expect((await as("lead", "GET", `/api/v1/sessions/${sessionOf.mate}`)).status).toBe(200)
    expectEnvelope(await as("lead", "GET", `/api/v1/sessions/${sessionOf.other}`), 404, "not_found")
    expectEnvelope(await as("lead", "GET", `/api/v1/sessions/${sessionOf.other}/events`), 404, "not_found")
    const events = await as("lead", "GET", "/api/v1/events?limit=100")
    expect([...new Set((events.body.data as Array<{ session_id: string }>).map((e) => e.session_id))].sort()).toEqual(mine)
    const usage = await as("lead", "GET", "/api/v1/usage?group_by=user")
    expect((usage.body.data as Array<{ key: string }>).map((g) => g.key).sort()).toEqual([people.lead.id, people.mate.id].sort())
  })

  it("a team lead's and a member's exports hold only the users they see; others' events by id are 404", async () => {
    const exported = async (who: "lead" | "mate" | "viewer") => {
      const res = await as(who, "GET", "/api/v1/usage/export?format=jsonl&group_by=user")
      expect(res.status).toBe(200)
      const text = typeof res.body === "string" ? res.body : JSON.stringify(res.body)
      return text.trim().split("\n").map((line) => JSON.parse(line).user_id as string).sort()
    }
    expect(await exported("lead")).toEqual([people.lead.id, people.mate.id].sort())
    expect(await exported("mate")).toEqual([people.mate.id])
    expect(await exported("viewer")).toEqual([people.lead.id, people.mate.id, people.other.id].sort())
    const all = await call(server, "GET", `/api/v1/events?session_id=${sessionOf.other}`, { key: live })
    const othersEvent = all.body.data[0].id as string
    expect((await as("viewer", "GET", `/api/v1/events/${othersEvent}`)).status).toBe(200)
    expectEnvelope(await as("lead", "GET", `/api/v1/events/${othersEvent}`), 404, "not_found")
    expectEnvelope(await as("mate", "GET", `/api/v1/events/${othersEvent}`), 404, "not_found")
  })

  it("a member sees only their own activity", async () => {
    expect(sessionIds(await as("mate", "GET", "/api/v1/sessions?limit=100"))).toEqual([sessionOf.mate])
    expectEnvelope(await as("mate", "GET", `/api/v1/sessions/${sessionOf.lead}`), 404, "not_found")
    const usage = await as("mate", "GET", "/api/v1/usage?group_by=user")
    expect((usage.body.data as Array<{ key: string }>).map((g) => g.key)).toEqual([people.mate.id])
  })
})

describe("the telemetry views by role", () => {
  const userIds = (res: JsonResponse, key: string) => (res.body.data as Array<Record<string, string>>).map((r) => r[key]).sort()

  it("productivity and coverage count only the users a team lead or member sees", async () => {
    const mine = [people.lead.id, people.mate.id].sort()
    const productivity = await as("lead", "GET", "/api/v1/productivity?group_by=user")
    expect(productivity.status, JSON.stringify(productivity.body)).toBe(200)
    expect(userIds(productivity, "key")).toEqual(mine)
    expect(productivity.body.totals.sessions).toBe(2)
    // A user outside their teams is not theirs to ask for: nothing is counted.
    const other = await as("lead", "GET", `/api/v1/productivity?group_by=user&user_id=${people.other.id}`)
    expect(other.body.data).toEqual([])
    expect(other.body.totals.sessions).toBe(0)
    const own = await as("mate", "GET", "/api/v1/productivity?group_by=user")
    expect(userIds(own, "key")).toEqual([people.mate.id])
    expect(userIds(await as("viewer", "GET", "/api/v1/productivity?group_by=user"), "key")).toEqual(
      [people.lead.id, people.mate.id, people.other.id].sort()
    )

    expect(userIds(await as("lead", "GET", "/api/v1/coverage?limit=100"), "user_id")).toEqual(mine)
    expect(userIds(await as("mate", "GET", "/api/v1/coverage?limit=100"), "user_id")).toEqual([people.mate.id])
    expect(userIds(await as("viewer", "GET", "/api/v1/coverage?limit=100"), "user_id")).toContain(people.other.id)
  })
})

describe("changing roles and leads", () => {
  it("is audited with the role and the leads before and after", async () => {
    const id = await user("promoted", "member", [teams.otherTeam])
    const promoted = await as("admin", "PATCH", `/api/v1/users/${id}`, { role: "team_lead" })
    expect(promoted.status, JSON.stringify(promoted.body)).toBe(200)
    const leads = await as("admin", "PATCH", `/api/v1/teams/${teams.otherTeam}`, { lead_ids: [id] })
    expect(leads.body).toMatchObject({ lead_ids: [id] })
    expectEnvelope(await as("admin", "PATCH", `/api/v1/teams/${teams.otherTeam}`, { lead_ids: [people.mate.id] }), 422, "unknown_reference")
    const log = await call(server, "GET", "/api/v1/audit-log?limit=100", { key: live })
    const entries = log.body.data as Array<{ request_id: string; before: any; after: any }>
    const roleEntry = entries.find((e) => e.request_id === promoted.headers.get("x-request-id"))
    expect(roleEntry).toMatchObject({ before: { role: "member" }, after: { role: "team_lead" } })
    const leadEntry = entries.find((e) => e.request_id === leads.headers.get("x-request-id"))
    expect(leadEntry).toMatchObject({ before: { lead_ids: [] }, after: { lead_ids: [id] } })
    // Replacing the members keeps the leads who stay; a lead who leaves the team leads it no more.
    const kept = await as("admin", "PATCH", `/api/v1/teams/${teams.otherTeam}`, { member_ids: [id, people.other.id, people.mate.id] })
    expect(kept.body).toMatchObject({ lead_ids: [id] })
    const left = await as("admin", "PATCH", `/api/v1/teams/${teams.otherTeam}`, { member_ids: [people.other.id] })
    expect(left.body).toMatchObject({ member_ids: [people.other.id], lead_ids: [] })
  })
})

describe("a team lead's budgets", () => {
  const budget = (scope: "team" | "org", scopeId: string) => ({
    name: `budget-${scopeId}`,
    type: "budget",
    scope,
    scope_id: scopeId,
    condition: { window: "monthly", metric: "tokens_total", threshold: 1000 },
    action: "warn"
  })

  it("creates, changes and deletes a budget of a team they lead, and no other rule", async () => {
    const made = await as("lead", "POST", "/api/v1/rules", budget("team", teams.led))
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    const changed = await as("lead", "PUT", `/api/v1/rules/${made.body.id}`, { condition: { window: "monthly", metric: "tokens_total", threshold: 2000 } })
    expect(changed.status, JSON.stringify(changed.body)).toBe(200)
    expectEnvelope(await as("lead", "PUT", `/api/v1/rules/${made.body.id}`, { scope_id: teams.otherTeam }), 403, "insufficient_role")
    expectEnvelope(await as("lead", "POST", "/api/v1/rules", budget("team", teams.otherTeam)), 403, "insufficient_role")
    expectEnvelope(await as("lead", "POST", "/api/v1/rules", budget("org", org.org_id)), 403, "insufficient_role")
    const orgRule = await call(server, "POST", "/api/v1/rules", { key: live, body: budget("org", org.org_id) })
    expectEnvelope(await as("lead", "DELETE", `/api/v1/rules/${orgRule.body.id}`), 403, "insufficient_role")
    expect((await as("lead", "DELETE", `/api/v1/rules/${made.body.id}`)).status).toBe(204)
    // Nothing of what was refused was made.
    const rules = await call(server, "GET", "/api/v1/rules?limit=100", { key: live })
    expect((rules.body.data as Array<{ scope_id: string }>).map((r) => r.scope_id)).toEqual([org.org_id])
  })

  it("API keys keep their scopes whatever the roles", async () => {
    expect((await call(server, "GET", `/api/v1/sessions/${sessionOf.other}`, { key: live })).status).toBe(200)
  })
})
