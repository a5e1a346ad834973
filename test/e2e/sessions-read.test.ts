import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import {
  activityBase,
  apiTime,
  at,
  byEventTs,
  bySessionStart,
  type EventRow,
  eventJson,
  seedActivity,
  seeder,
  type Seeder,
  type SessionRow,
  sessionJson,
  signalJson
} from "../support/seed.ts"
import { expectEnvelope, get, ids, walk } from "./activity-helpers.ts"

let server: TestServer
let seed: Seeder
let acme: Bootstrapped
let globex: Bootstrapped
/** An org for tests that add sessions, so the totals of the others stay put. */
let hooli: Bootstrapped
let live: string
let userB: string
let userC: string
let sessions: Array<SessionRow>
let events: Array<EventRow>
let testEnvSessions: Array<SessionRow>
let globexSessions: Array<SessionRow>

const sessionKeys = [
  "adapter",
  "client_session_id",
  "cost_usd",
  "duration_s",
  "end_reason",
  "ended_at",
  "error_count",
  "id",
  "model",
  "models",
  "project_id",
  "signal_count",
  "started_at",
  "status",
  "tokens_in",
  "tokens_out",
  "user_id"
]

beforeAll(async () => {
  server = await startServer()
  acme = await bootstrapOrg(server.databaseUrl, "acme", "team")
  globex = await bootstrapOrg(server.databaseUrl, "globex", "business")
  hooli = await bootstrapOrg(server.databaseUrl, "hooli", "team")
  live = acme.api_key_live!
  const b = await call(server, "POST", "/api/v1/users", { key: live, body: { email: "b@acme.dev", name: "B" } })
  const c = await call(server, "POST", "/api/v1/users", { key: live, body: { email: "c@acme.dev", name: "C" } })
  userB = b.body.id
  userC = c.body.id
  seed = seeder(server.databaseUrl)
  const acmeLive = { org_id: acme.org_id, environment: "live" } as const
  ;({ sessions, events } = await seedActivity(seed, acmeLive, { users: [acme.user_id, acme.user_id, userB, acme.user_id, userC], count: 36 }))
  testEnvSessions = (await seedActivity(seed, { org_id: acme.org_id, environment: "test" }, { users: [acme.user_id], count: 4 })).sessions
  globexSessions = (await seedActivity(seed, { org_id: globex.org_id, environment: "live" }, { users: [globex.user_id], count: 4 })).sessions
})
afterAll(async () => {
  await seed?.close()
  await server?.stop()
})

const expected = (filter: (s: SessionRow) => boolean, order: "asc" | "desc" = "desc") => sessions.filter(filter).sort(bySessionStart(order))

describe("GET /api/v1/sessions", () => {
  it("lists the tenant's sessions newest first, 20 a page, with the total and the spec's fields", async () => {
    const res = await get(server, live, "/api/v1/sessions")
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["cursor", "data", "has_more", "total"])
    expect(res.body.total).toBe(36)
    expect(res.body.has_more).toBe(true)
    expect(res.body.data).toHaveLength(20)
    expect(res.body.data).toEqual(expected(() => true).slice(0, 20).map(sessionJson))
    for (const s of res.body.data) expect(Object.keys(s).sort()).toEqual(sessionKeys)
  })

  it("shows open sessions with ended_at null, status active and the duration so far", async () => {
    const open = sessions.find((s) => s.ended_at === null)!
    const ended = sessions.find((s) => s.ended_at !== null && s.end_reason === "timeout")!
    const all = await walk(server, live, "/api/v1/sessions", { limit: "100" })
    const openJson = all.items.find((s) => s.id === open.id)
    expect(openJson).toMatchObject({ status: "active", ended_at: null, end_reason: null, duration_s: 300 })
    const endedJson = all.items.find((s) => s.id === ended.id)
    expect(endedJson.status).toBe("ended")
    expect(endedJson.end_reason).toBe("timeout")
    expect(endedJson.duration_s).toBe((Date.parse(ended.ended_at!) - Date.parse(ended.started_at)) / 1000)
    // bigint columns arrive as numbers
    expect(all.items.find((s) => s.id === sessions[5]!.id).tokens_in).toBe(3_000_000_000)
  })

  it.each(["desc", "asc"] as const)("walks every page in %s order without repeating or skipping, ties broken by id", async (order) => {
    const walked = await walk(server, live, "/api/v1/sessions", { limit: "4", order })
    expect(walked.items).toEqual(expected(() => true, order).map(sessionJson))
    for (const page of walked.pages) expect(page.total).toBe(36)
  })

  it("order defaults to desc; an explicit desc is the same listing", async () => {
    const implicit = await get(server, live, "/api/v1/sessions", { limit: "5" })
    const explicit = await get(server, live, "/api/v1/sessions", { limit: "5", order: "desc" })
    expect(ids(implicit.body.data)).toEqual(ids(explicit.body.data))
    const asc = await get(server, live, "/api/v1/sessions", { limit: "5", order: "asc" })
    expect(ids(asc.body.data)).toEqual(ids(expected(() => true, "asc").slice(0, 5)))
  })

  const exactStart = () => sessions[6]!.started_at // shared with sessions[7]
  const filters: Array<[string, () => Record<string, string>, () => (s: SessionRow) => boolean]> = [
    ["user_id", () => ({ user_id: userB }), () => (s) => s.user_id === userB],
    ["project_id", () => ({ project_id: "proj_alpha" }), () => (s) => s.project_id === "proj_alpha"],
    ["model (primary, exact)", () => ({ model: "claude-sonnet-4" }), () => (s) => s.primary_model === "claude-sonnet-4"],
    ["adapter", () => ({ adapter: "cursor" }), () => (s) => s.adapter === "cursor"],
    ["from (inclusive)", () => ({ from: apiTime(exactStart()) }), () => (s) => s.started_at >= exactStart()],
    ["to (exclusive)", () => ({ to: apiTime(exactStart()) }), () => (s) => s.started_at < exactStart()],
    [
      "from and to with offsets",
      () => ({ from: "2025-03-01T09:30:00+01:00", to: "2025-03-01T10:00:00.000000Z" }),
      () => (s) => s.started_at >= "2025-03-01T08:30:00.000000Z" && s.started_at < "2025-03-01T10:00:00.000000Z"
    ],
    ["from as a date (midnight UTC)", () => ({ from: "2025-03-02" }), () => () => false],
    ["to as a date", () => ({ to: "2025-03-02" }), () => () => true],
    [
      "several filters together",
      () => ({ user_id: acme.user_id, adapter: "claude-code", from: apiTime(sessions[3]!.started_at) }),
      () => (s) => s.user_id === acme.user_id && s.adapter === "claude-code" && s.started_at >= sessions[3]!.started_at
    ]
  ]

  it.each(filters)("filter %s narrows the list, the total and every page", async (_name, params, predicate) => {
    for (const order of ["desc", "asc"] as const) {
      const want = expected(predicate(), order)
      const walked = await walk(server, live, "/api/v1/sessions", { ...params(), limit: "3", order })
      expect(ids(walked.items)).toEqual(ids(want))
      for (const page of walked.pages) expect(page.total).toBe(want.length)
    }
  })

  it("the filters are meaningful on this data", () => {
    // from/to hit a start shared by two sessions; the model filter has a longer namesake to exclude.
    expect(sessions[6]!.started_at).toBe(sessions[7]!.started_at)
    expect(sessions.some((s) => s.primary_model === "claude-sonnet-4-5")).toBe(true)
    expect(expected((s) => s.primary_model === "claude-sonnet-4").length).toBeGreaterThan(3)
    expect(expected((s) => s.user_id === userB).length).toBeGreaterThan(3)
  })

  it("a filter no session matches is an empty page with total 0", async () => {
    const res = await get(server, live, "/api/v1/sessions", { user_id: "user_nobody" })
    expect(res.body).toEqual({ data: [], cursor: "", has_more: false, total: 0 })
    const user = await get(server, live, "/api/v1/sessions", { user_id: userC, model: "gpt-4o", adapter: "nope" })
    expect(user.body.total).toBe(0)
  })

  it("never shows another org's or another environment's sessions", async () => {
    const liveIds = ids((await walk(server, live, "/api/v1/sessions", { limit: "100" })).items)
    for (const s of [...testEnvSessions, ...globexSessions]) expect(liveIds).not.toContain(s.id)
    const test = await walk(server, acme.api_key_test, "/api/v1/sessions", { limit: "100" })
    expect(ids(test.items)).toEqual(ids([...testEnvSessions].sort(bySessionStart("desc"))))
    expect(test.pages[0].total).toBe(4)
    const other = await walk(server, globex.api_key_live!, "/api/v1/sessions", {})
    expect(ids(other.items).sort()).toEqual(ids(globexSessions).sort())
  })

  it("a cursor continues its own order; a contradicting order or a made-up cursor is 400", async () => {
    const first = await get(server, live, "/api/v1/sessions", { limit: "3", order: "asc" })
    const next = await get(server, live, "/api/v1/sessions", { limit: "3", cursor: first.body.cursor })
    expect(ids(next.body.data)).toEqual(ids(expected(() => true, "asc").slice(3, 6)))
    expectEnvelope(
      await get(server, live, "/api/v1/sessions", { limit: "3", order: "desc", cursor: first.body.cursor }),
      400,
      "invalid_parameters"
    )
    const made = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
    for (const cursor of ["nope", made({ k: "sess_1" }), made({ o: "asc", t: "yesterday", i: "x" }), made({ o: "up", t: "2025-03-01", i: "x" })]) {
      expectEnvelope(await get(server, live, "/api/v1/sessions", { cursor }), 400, "invalid_parameters")
    }
  })

  it.each([
    ["from", "yesterday"],
    ["from", "2025-02-30"],
    ["from", "2025-03-01T10:00:00"],
    ["from", "2025-03-01T25:00:00Z"],
    ["from", "1741000000"],
    ["to", "2025-13-01T00:00:00Z"],
    ["to", ""],
    ["order", "up"],
    ["order", "DESC"],
    ["limit", "0"],
    ["limit", "101"],
    ["limit", "abc"],
    ["limit", "1.5"]
  ])("400 invalid_parameters for %s=%s", async (name, value) => {
    const res = await get(server, live, "/api/v1/sessions", { [name]: value })
    expectEnvelope(res, 400, "invalid_parameters")
    expect(res.body.error).toContain(name)
  })

  it("limit bounds 1 and 100 are accepted", async () => {
    expect((await get(server, live, "/api/v1/sessions", { limit: "1" })).body.data).toHaveLength(1)
    expect((await get(server, live, "/api/v1/sessions", { limit: "100" })).body.data).toHaveLength(36)
  })
})

describe("pagination under concurrent inserts", () => {
  it.each(["desc", "asc"] as const)("%s: sessions inserted between pages never make an existing one repeat or vanish", async (order) => {
    const org = await bootstrapOrg(server.databaseUrl, `busy-${order}`, "team")
    const tenant = { org_id: org.org_id, environment: "test" } as const
    const { sessions: original } = await seedActivity(seed, tenant, { users: [org.user_id], count: 14 })
    const inserted: Array<SessionRow> = []
    const walked = await walk(server, org.api_key_test, "/api/v1/sessions", { limit: "3", order }, async (_page, last) => {
      const lastRow = [...original, ...inserted].find((s) => s.id === last.id)!
      // one before everything, one after everything, two at exactly the last item's start
      for (const startedAt of [at(activityBase, 86_400_000), at(activityBase, -86_400_000), lastRow.started_at, lastRow.started_at]) {
        inserted.push(await seed.session({ ...tenant, user_id: org.user_id, started_at: startedAt }))
      }
    })
    const seen = ids(walked.items)
    expect(new Set(seen).size).toBe(seen.length)
    const originalIds = new Set(ids(original))
    expect(seen.filter((id) => originalIds.has(id))).toEqual(ids([...original].sort(bySessionStart(order))))
    expect(inserted.length).toBeGreaterThan(8)
    expect(walked.pages.at(-1).total).toBe(14 + inserted.length)
  })

  it("events inserted between pages never make an existing one repeat or vanish", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "busy-events", "team")
    const tenant = { org_id: org.org_id, environment: "test" } as const
    const { sessions: s, events: original } = await seedActivity(seed, tenant, { users: [org.user_id], count: 9 })
    const session = s[0]!
    const inserted: Array<EventRow> = []
    const walked = await walk(server, org.api_key_test, "/api/v1/events", { limit: "4" }, async (_page, last) => {
      const lastRow = [...original, ...inserted].find((e) => e.id === last.id)!
      for (const ts of [at(activityBase, 86_400_000), at(activityBase, -1), lastRow.ts, lastRow.ts]) {
        inserted.push(await seed.event({ ...tenant, session_id: session.id, user_id: org.user_id, ts }))
      }
    })
    const seen = ids(walked.items)
    expect(new Set(seen).size).toBe(seen.length)
    const originalIds = new Set(ids(original))
    expect(seen.filter((id) => originalIds.has(id))).toEqual(ids([...original].sort(byEventTs("desc"))))
  })
})

describe("GET /api/v1/sessions/:id", () => {
  it("the full session with all its signals in time order", async () => {
    const session = sessions[8]!
    // more signals, inserted out of order, two sharing a timestamp
    const extra: Array<EventRow> = []
    for (const ms of [9000, 4000, 4000, 500, 12_000.25]) {
      extra.push(
        await seed.event({
          org_id: acme.org_id,
          environment: "live",
          session_id: session.id,
          user_id: session.user_id,
          ts: at(session.started_at, ms),
          type: "hesitation",
          metadata: { nested: { ms }, list: [1, "two"] }
        })
      )
    }
    const all = [...events.filter((e) => e.session_id === session.id), ...extra].sort(byEventTs("asc"))
    const res = await get(server, live, `/api/v1/sessions/${session.id}`)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual([...sessionKeys, "signals"].sort())
    expect(res.body).toEqual({ ...sessionJson(session), signals: all.map(signalJson) })
    for (const signal of res.body.signals) expect(signal.id).toMatch(/^sig_[0-9a-f]+$/)
    // the events stay immutable records of the signals
    const recorded = await walk(server, live, `/api/v1/sessions/${session.id}/events`, { order: "asc" })
    expect(recorded.items.map((e) => e.signal_id)).toEqual(all.map((e) => e.signal_id))
  })

  it("a session without signals has an empty list", async () => {
    const bare = await seed.session({ org_id: hooli.org_id, environment: "live", user_id: hooli.user_id, started_at: at(activityBase, -5000) })
    const res = await get(server, hooli.api_key_live!, `/api/v1/sessions/${bare.id}`)
    expect(res.body).toEqual({ ...sessionJson(bare), signals: [] })
    expect(res.body).toMatchObject({ model: null, models: [], project_id: null, status: "active", duration_s: 0 })
  })

  it("404 for an unknown id, another org's session and another environment's session", async () => {
    for (
      const [key, id] of [
        [live, "sess_doesnotexist"],
        [live, globexSessions[0]!.id],
        [live, testEnvSessions[0]!.id],
        [acme.api_key_test, sessions[0]!.id],
        [globex.api_key_live!, sessions[0]!.id]
      ] as const
    ) {
      expectEnvelope(await get(server, key, `/api/v1/sessions/${id}`), 404, "not_found")
      expectEnvelope(await get(server, key, `/api/v1/sessions/${id}/events`), 404, "not_found")
    }
  })
})

describe("GET /api/v1/sessions/:id/events", () => {
  const sessionWithMost = () => sessions[2]! // three events

  it("the session's events, newest first by default, in the event shape", async () => {
    const session = sessionWithMost()
    const res = await get(server, live, `/api/v1/sessions/${session.id}/events`)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["cursor", "data", "has_more"])
    expect(res.body.data).toEqual(events.filter((e) => e.session_id === session.id).sort(byEventTs("desc")).map(eventJson))
    expect(res.body).toMatchObject({ has_more: false, cursor: "" })
  })

  it.each(["desc", "asc"] as const)("pages through a long session in %s order", async (order) => {
    const tenant = { org_id: hooli.org_id, environment: "live" } as const
    const session = await seed.session({ ...tenant, user_id: hooli.user_id, started_at: at(activityBase, -600_000) })
    const rows: Array<EventRow> = []
    for (let k = 0; k < 11; k++) {
      rows.push(
        await seed.event({
          ...tenant,
          session_id: session.id,
          user_id: hooli.user_id,
          ts: at(session.started_at, 1000 * Math.floor(k / 2)),
          model: "gpt-4o"
        })
      )
    }
    const walked = await walk(server, hooli.api_key_live!, `/api/v1/sessions/${session.id}/events`, { limit: "3", order })
    expect(walked.pages).toHaveLength(4)
    expect(walked.items).toEqual(rows.sort(byEventTs(order)).map(eventJson))
  })

  it("400 for a bad limit, order or cursor", async () => {
    const path = `/api/v1/sessions/${sessionWithMost().id}/events`
    for (const params of [{ limit: "0" }, { limit: "101" }, { order: "sideways" }, { cursor: "garbage" }]) {
      expectEnvelope(await get(server, live, path, params), 400, "invalid_parameters")
    }
  })
})

describe("scopes", () => {
  const keyWith = async (scopes: ReadonlyArray<string>) =>
    (await call(server, "POST", "/api/v1/api-keys", { key: live, body: { name: scopes.join(" "), scopes } })).body.key as string

  it("403 insufficient_scope without sessions:read; sessions:write implies it", async () => {
    const rulesOnly = await keyWith(["rules:read"])
    const eventsOnly = await keyWith(["events:read"])
    const id = sessions[0]!.id
    for (const key of [rulesOnly, eventsOnly]) {
      for (const path of ["/api/v1/sessions", `/api/v1/sessions/${id}`, `/api/v1/sessions/${id}/events`]) {
        expectEnvelope(await get(server, key, path), 403, "insufficient_scope")
      }
    }
    // scope is checked before the id is looked up: no existence oracle
    expectEnvelope(await get(server, rulesOnly, "/api/v1/sessions/sess_unknown"), 403, "insufficient_scope")
    for (const scopes of [["sessions:read"], ["sessions:write"]]) {
      const key = await keyWith(scopes)
      expect((await get(server, key, "/api/v1/sessions")).status).toBe(200)
      expect((await get(server, key, `/api/v1/sessions/${id}`)).status).toBe(200)
      expect((await get(server, key, `/api/v1/sessions/${id}/events`)).status).toBe(200)
    }
  })

  it("401 without a key", async () => {
    expectEnvelope(await call(server, "GET", "/api/v1/sessions"), 401, "missing_api_key")
  })
})
