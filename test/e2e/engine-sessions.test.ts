import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import {
  apiTime,
  at,
  byEventTs,
  bySessionStart,
  type EventRow,
  seedActivity,
  seeder,
  type Seeder,
  type SessionRow,
  signalJson
} from "../support/seed.ts"
import { expectEnvelope, get, ids } from "./activity-helpers.ts"

let server: TestServer
let seed: Seeder
let acme: Bootstrapped
let globex: Bootstrapped
let userB: string
let licenseA: string
let licenseB: string
let licenseATest: string
let sessions: Array<SessionRow>
let events: Array<EventRow>
let testEnvSessions: Array<SessionRow>
let globexSessions: Array<SessionRow>

const engineSession = (s: SessionRow) => ({
  id: s.id,
  adapter: s.adapter,
  started_at: apiTime(s.started_at),
  ended_at: s.ended_at === null ? null : apiTime(s.ended_at),
  signals: s.signal_count,
  tokens_in: s.tokens_in,
  tokens_out: s.tokens_out,
  cost_usd: s.cost_usd
})

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "acme", "team")
  globex = await bootstrapOrg(server.databaseUrl, "globex", "team")
  const live = acme.api_key_live!
  userB = (await call(server, "POST", "/api/v1/users", { key: live, body: { email: "b@acme.dev", name: "B" } })).body.id
  const userC = (await call(server, "POST", "/api/v1/users", { key: live, body: { email: "c@acme.dev", name: "C" } })).body.id
  licenseA = acme.license_key
  expect(acme.license_key_environment).toBe("live")
  licenseB = (await call(server, "POST", "/api/v1/license-keys", { key: live, body: { user_id: userB } })).body.key
  licenseATest = (await call(server, "POST", "/api/v1/license-keys", { key: acme.api_key_test, body: { user_id: acme.user_id } })).body.key
  seed = seeder(server.databaseUrl)
  ;({ sessions, events } = await seedActivity(seed, { org_id: acme.org_id, environment: "live" }, {
    users: [acme.user_id, acme.user_id, userB, acme.user_id, userC],
    count: 36
  }))
  testEnvSessions = (await seedActivity(seed, { org_id: acme.org_id, environment: "test" }, { users: [acme.user_id], count: 3 })).sessions
  // globex rows carrying acme's user id: the org alone must keep them apart
  globexSessions = (await seedActivity(seed, { org_id: globex.org_id, environment: "live" }, { users: [acme.user_id], count: 3 })).sessions
})
afterAll(async () => {
  await seed?.close()
  await server?.stop()
})

const ofUser = (userId: string, filter: (s: SessionRow) => boolean = () => true) =>
  sessions.filter((s) => s.user_id === userId && filter(s)).sort(bySessionStart("desc"))

describe("GET /engine/v1/sessions", () => {
  it("the authenticated user's sessions, newest first, 20 by default, in the engine shape", async () => {
    expect(ofUser(acme.user_id).length).toBeGreaterThan(20)
    const res = await get(server, licenseA, "/engine/v1/sessions")
    expect(res.status).toBe(200)
    expect(Object.keys(res.body)).toEqual(["sessions"])
    expect(res.body.sessions).toEqual(ofUser(acme.user_id).slice(0, 20).map(engineSession))
    for (const s of res.body.sessions) {
      expect(Object.keys(s).sort()).toEqual(["adapter", "cost_usd", "ended_at", "id", "signals", "started_at", "tokens_in", "tokens_out"])
    }
    expect(res.body.sessions.some((s: { ended_at: string | null }) => s.ended_at === null)).toBe(true)
  })

  it("limit 1 to 100", async () => {
    expect((await get(server, licenseA, "/engine/v1/sessions", { limit: "1" })).body.sessions).toEqual(
      ofUser(acme.user_id).slice(0, 1).map(engineSession)
    )
    expect(ids((await get(server, licenseA, "/engine/v1/sessions", { limit: "100" })).body.sessions)).toEqual(ids(ofUser(acme.user_id)))
  })

  it.each([["limit", "0"], ["limit", "101"], ["limit", "many"], ["limit", "2.5"], ["before", "last week"], ["before", "2025-03-01T09:00"]])(
    "400 invalid_parameters for %s=%s",
    async (name, value) => {
      const res = await get(server, licenseA, "/engine/v1/sessions", { [name]: value })
      expectEnvelope(res, 400, "invalid_parameters")
      expect(res.body.error).toContain(name)
    }
  )

  it("before: only sessions started strictly before it", async () => {
    // a session starting on a whole millisecond, since `before` is given in milliseconds
    const pivot = ofUser(acme.user_id).filter((s) => s.started_at.endsWith("000Z"))[4]!
    const res = await get(server, licenseA, "/engine/v1/sessions", { before: apiTime(pivot.started_at), limit: "100" })
    const want = ofUser(acme.user_id, (s) => s.started_at < pivot.started_at)
    expect(want.length).toBeGreaterThan(5)
    expect(ids(res.body.sessions)).toEqual(ids(want))
    expect(ids(res.body.sessions)).not.toContain(pivot.id)
    const dated = await get(server, licenseA, "/engine/v1/sessions", { before: "2025-03-01T09:00:00+01:00", limit: "100" })
    expect(ids(dated.body.sessions)).toEqual(ids(ofUser(acme.user_id, (s) => s.started_at < "2025-03-01T08:00:00.000000Z")))
    expect((await get(server, licenseA, "/engine/v1/sessions", { before: "2025-03-01" })).body.sessions).toEqual([])
  })

  it("adapter, alone and with before and limit", async () => {
    const cursor = await get(server, licenseA, "/engine/v1/sessions", { adapter: "cursor", limit: "100" })
    expect(ids(cursor.body.sessions)).toEqual(ids(ofUser(acme.user_id, (s) => s.adapter === "cursor")))
    expect(cursor.body.sessions.length).toBeGreaterThan(3)
    const pivot = ofUser(acme.user_id, (s) => s.adapter === "codex")[1]!
    const combined = await get(server, licenseA, "/engine/v1/sessions", { adapter: "codex", before: apiTime(pivot.started_at), limit: "2" })
    expect(ids(combined.body.sessions)).toEqual(
      ids(ofUser(acme.user_id, (s) => s.adapter === "codex" && s.started_at < pivot.started_at).slice(0, 2))
    )
    expect((await get(server, licenseA, "/engine/v1/sessions", { adapter: "vim" })).body).toEqual({ sessions: [] })
  })

  it("other users' sessions, other environments and other orgs are invisible", async () => {
    const b = await get(server, licenseB, "/engine/v1/sessions", { limit: "100" })
    expect(ids(b.body.sessions)).toEqual(ids(ofUser(userB)))
    const a = ids((await get(server, licenseA, "/engine/v1/sessions", { limit: "100" })).body.sessions)
    for (const s of [...ofUser(userB), ...testEnvSessions, ...globexSessions]) expect(a).not.toContain(s.id)
    const test = await get(server, licenseATest, "/engine/v1/sessions")
    expect(ids(test.body.sessions)).toEqual(ids([...testEnvSessions].sort(bySessionStart("desc"))))
  })

  it("401 without a license key, and an API key is not one", async () => {
    expectEnvelope(await call(server, "GET", "/engine/v1/sessions"), 401, "missing_license_key")
    expectEnvelope(await get(server, acme.api_key_test, "/engine/v1/sessions"), 401, "invalid_license_key")
  })
})

describe("GET /engine/v1/sessions/:id", () => {
  it("one of the user's sessions with its signals in time order", async () => {
    const session = ofUser(acme.user_id).find((s) => s.signal_count === 3)!
    const late = await seed.event({
      org_id: acme.org_id,
      environment: "live",
      session_id: session.id,
      user_id: session.user_id,
      ts: at(session.started_at, 1500),
      type: "correction",
      metadata: { why: "typo" }
    })
    const res = await get(server, licenseA, `/engine/v1/sessions/${session.id}`)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["session", "signals"])
    expect(res.body.session).toEqual(engineSession(session))
    const want = [...events.filter((e) => e.session_id === session.id), late].sort(byEventTs("asc"))
    expect(res.body.signals).toEqual(want.map(signalJson))
    expect(res.body.signals.map((s: { type: string }) => s.type)).toEqual(["user-prompt", "correction", "post-tool", "stop"])
  })

  it("404 for another user's session, another environment's, another org's and an unknown id", async () => {
    for (
      const [key, id] of [
        [licenseA, ofUser(userB)[0]!.id],
        [licenseB, ofUser(acme.user_id)[0]!.id],
        [licenseA, testEnvSessions[0]!.id],
        [licenseATest, ofUser(acme.user_id)[0]!.id],
        [licenseA, globexSessions[0]!.id],
        [licenseA, "sess_doesnotexist"]
      ] as const
    ) {
      expectEnvelope(await get(server, key, `/engine/v1/sessions/${id}`), 404, "not_found")
    }
    expect((await get(server, licenseB, `/engine/v1/sessions/${ofUser(userB)[0]!.id}`)).status).toBe(200)
  })
})
