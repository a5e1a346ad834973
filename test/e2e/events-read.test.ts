import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { apiTime, byEventTs, type EventRow, eventJson, seedActivity, seeder, type Seeder, type SessionRow } from "../support/seed.ts"
import { expectEnvelope, get, ids, walk } from "./activity-helpers.ts"

let server: TestServer
let seed: Seeder
let acme: Bootstrapped
let globex: Bootstrapped
let live: string
let userB: string
let sessions: Array<SessionRow>
let events: Array<EventRow>
let testEnvEvents: Array<EventRow>
let globexEvents: Array<EventRow>

const eventKeys = [
  "adapter",
  "cost_usd",
  "error_code",
  "id",
  "latency_ms",
  "model",
  "project_id",
  "session_id",
  "signal_id",
  "tokens_in",
  "tokens_out",
  "ts",
  "type",
  "user_id",
  "verdict"
]

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "acme", "team")
  globex = await bootstrapOrg(server.databaseUrl, "globex", "business")
  live = acme.api_key_live!
  userB = (await call(server, "POST", "/api/v1/users", { key: live, body: { email: "b@acme.dev", name: "B" } })).body.id
  seed = seeder(server.databaseUrl)
  ;({ sessions, events } = await seedActivity(seed, { org_id: acme.org_id, environment: "live" }, { users: [acme.user_id, userB], count: 18 }))
  testEnvEvents = (await seedActivity(seed, { org_id: acme.org_id, environment: "test" }, { users: [acme.user_id], count: 3 })).events
  globexEvents = (await seedActivity(seed, { org_id: globex.org_id, environment: "live" }, { users: [globex.user_id], count: 3 })).events
})
afterAll(async () => {
  await seed?.close()
  await server?.stop()
})

const expected = (filter: (e: EventRow) => boolean) => events.filter(filter).sort(byEventTs("desc"))

describe("GET /api/v1/events", () => {
  it("lists the tenant's events newest first, 20 a page, in the event shape", async () => {
    expect(events.length).toBeGreaterThan(30)
    const res = await get(server, live, "/api/v1/events")
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["cursor", "data", "has_more"])
    expect(res.body.has_more).toBe(true)
    expect(res.body.data).toEqual(expected(() => true).slice(0, 20).map(eventJson))
    for (const e of res.body.data) expect(Object.keys(e).sort()).toEqual(eventKeys)
  })

  it("walks every page without repeating or skipping, ties (shared timestamps) broken by id", async () => {
    const walked = await walk(server, live, "/api/v1/events", { limit: "7" })
    expect(walked.items).toEqual(expected(() => true).map(eventJson))
    const stamps = events.map((e) => e.ts)
    expect(new Set(stamps).size).toBeLessThan(stamps.length)
  })

  const exactTs = () => events.find((e) => e.session_id === sessions[6]!.id)!.ts // shared with sessions[7]'s first event
  const filters: Array<[string, () => Record<string, string>, () => (e: EventRow) => boolean]> = [
    ["session_id", () => ({ session_id: sessions[5]!.id }), () => (e) => e.session_id === sessions[5]!.id],
    ["user_id", () => ({ user_id: userB }), () => (e) => e.user_id === userB],
    ["project_id", () => ({ project_id: "proj_beta" }), () => (e) => e.project_id === "proj_beta"],
    ["model (exact)", () => ({ model: "claude-sonnet-4" }), () => (e) => e.model === "claude-sonnet-4"],
    ["adapter", () => ({ adapter: "codex" }), () => (e) => e.adapter === "codex"],
    ["from (inclusive)", () => ({ from: apiTime(exactTs()) }), () => (e) => e.ts >= exactTs()],
    ["to (exclusive)", () => ({ to: apiTime(exactTs()) }), () => (e) => e.ts < exactTs()],
    ["error_only=true", () => ({ error_only: "true" }), () => (e) => e.error_code !== null],
    ["error_only=false", () => ({ error_only: "false" }), () => () => true],
    [
      "several filters together",
      () => ({ user_id: acme.user_id, error_only: "true", from: "2025-03-01T08:20:00Z", to: "2025-03-01T09:20:00+00:00" }),
      () => (e) =>
        e.user_id === acme.user_id && e.error_code !== null && e.ts >= "2025-03-01T08:20:00.000000Z" &&
        e.ts < "2025-03-01T09:20:00.000000Z"
    ]
  ]

  it.each(filters)("filter %s narrows the list on every page", async (_name, params, predicate) => {
    const want = expected(predicate())
    expect(want.length).toBeGreaterThan(0)
    const walked = await walk(server, live, "/api/v1/events", { ...params(), limit: "2" })
    expect(ids(walked.items)).toEqual(ids(want))
  })

  it("the filters are meaningful on this data", () => {
    expect(events.filter((e) => e.ts === exactTs())).toHaveLength(2)
    expect(events.some((e) => e.model === "claude-sonnet-4-5")).toBe(true)
    expect(expected((e) => e.error_code !== null).length).toBeLessThan(events.length)
    expect(new Set(events.map((e) => e.error_code))).toEqual(new Set([null, "rate_limited", "context_window_exceeded"]))
  })

  it("a filter nothing matches is an empty last page", async () => {
    expect((await get(server, live, "/api/v1/events", { model: "claude" })).body).toEqual({ data: [], cursor: "", has_more: false })
  })

  it("never shows another org's or another environment's events", async () => {
    const seen = ids((await walk(server, live, "/api/v1/events", { limit: "100" })).items)
    expect(seen).toHaveLength(events.length)
    for (const e of [...testEnvEvents, ...globexEvents]) expect(seen).not.toContain(e.id)
    const test = await walk(server, acme.api_key_test, "/api/v1/events", { limit: "100" })
    expect(ids(test.items)).toEqual(ids([...testEnvEvents].sort(byEventTs("desc"))))
  })

  it.each([
    ["error_only", "yes"],
    ["error_only", "1"],
    ["from", "2025-03-01 08:00"],
    ["from", "2025-03-01T08:00:00"],
    ["to", "tomorrow"],
    ["limit", "0"],
    ["limit", "101"],
    ["limit", "ten"]
  ])("400 invalid_parameters for %s=%s", async (name, value) => {
    const res = await get(server, live, "/api/v1/events", { [name]: value })
    expectEnvelope(res, 400, "invalid_parameters")
    expect(res.body.error).toContain(name)
  })

  it("400 for a cursor this endpoint did not make", async () => {
    for (const cursor of ["garbage", Buffer.from(JSON.stringify({ k: "evt_1" })).toString("base64url")]) {
      expectEnvelope(await get(server, live, "/api/v1/events", { cursor }), 400, "invalid_parameters")
    }
  })

  it("a cursor keeps working with the same filters", async () => {
    const want = expected((e) => e.user_id === userB)
    const first = await get(server, live, "/api/v1/events", { user_id: userB, limit: "3" })
    const second = await get(server, live, "/api/v1/events", { user_id: userB, limit: "3", cursor: first.body.cursor })
    expect(ids([...first.body.data, ...second.body.data])).toEqual(ids(want.slice(0, 6)))
  })
})

describe("GET /api/v1/events/:id", () => {
  it("one event, by its id or by the id of its signal (what the adapter was answered)", async () => {
    for (const e of [events[0]!, events.find((x) => x.error_code !== null)!, events.find((x) => x.model === null)!]) {
      for (const id of [e.id, e.signal_id]) {
        const res = await get(server, live, `/api/v1/events/${id}`)
        expect(res.status).toBe(200)
        expect(res.body).toEqual(eventJson(e))
      }
    }
  })

  it("404 for an unknown id, an unknown signal id, another org's event or signal and another environment's event", async () => {
    for (
      const [key, id] of [
        [live, "evt_doesnotexist"],
        [live, "sig_doesnotexist"],
        [live, globexEvents[0]!.id],
        [live, globexEvents[0]!.signal_id],
        [live, testEnvEvents[0]!.id],
        [acme.api_key_test, events[0]!.id]
      ] as const
    ) {
      expectEnvelope(await get(server, key, `/api/v1/events/${id}`), 404, "not_found")
    }
  })
})

describe("scopes", () => {
  it("403 insufficient_scope without events:read; events:write implies it", async () => {
    const keyWith = async (scopes: ReadonlyArray<string>) =>
      (await call(server, "POST", "/api/v1/api-keys", { key: live, body: { name: "k", scopes } })).body.key as string
    for (const scopes of [["rules:read"], ["sessions:read"]]) {
      const key = await keyWith(scopes)
      expectEnvelope(await get(server, key, "/api/v1/events"), 403, "insufficient_scope")
      expectEnvelope(await get(server, key, `/api/v1/events/${events[0]!.id}`), 403, "insufficient_scope")
    }
    for (const scopes of [["events:read"], ["events:write"]]) {
      const key = await keyWith(scopes)
      expect((await get(server, key, "/api/v1/events")).status).toBe(200)
      expect((await get(server, key, `/api/v1/events/${events[0]!.id}`)).status).toBe(200)
    }
  })
})
