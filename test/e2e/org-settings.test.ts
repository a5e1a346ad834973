import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer } from "../support/harness.ts"

let server: TestServer
let org: Bootstrapped
let other: Bootstrapped

beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "settings", "team")
  other = await bootstrapOrg(server.databaseUrl, "bystander", "team")
})
afterAll(() => server?.stop())

const patchOrg = (body: unknown, key = org.api_key_live!) => call(server, "PATCH", "/api/v1/org", { key, body })
const getOrg = (key = org.api_key_live!) => call(server, "GET", "/api/v1/org", { key })

const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: res.headers.get("x-request-id") })
}

describe("PATCH /api/v1/org", () => {
  it("a new org starts in UTC with a 30-minute session timeout and the deployment's goal-drift streak", async () => {
    const res = await getOrg()
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ time_zone: "UTC", session_timeout: 1800, drift_prompts: null })
  })

  it("sets the org's goal-drift streak, 0 for none, and null gives it back to the deployment", async () => {
    for (const value of [5, 0, 20, null]) {
      const res = await patchOrg({ drift_prompts: value })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.drift_prompts).toBe(value)
      expect((await getOrg()).body.drift_prompts).toBe(value)
    }
    // Left out, it stays.
    await patchOrg({ drift_prompts: 4 })
    expect((await patchOrg({ session_timeout: 1800 })).body.drift_prompts).toBe(4)
    expect((await patchOrg({ drift_prompts: null })).body.drift_prompts).toBeNull()
  })

  it("sets the time zone alone, answers the updated org, and GET /org shows it", async () => {
    const before = (await getOrg()).body
    const res = await patchOrg({ time_zone: "Europe/Berlin" })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...before, time_zone: "Europe/Berlin" })
    expect((await getOrg()).body).toEqual(res.body)
  })

  it("sets the session timeout alone, keeping the time zone", async () => {
    const res = await patchOrg({ session_timeout: 900 })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: org.org_id, time_zone: "Europe/Berlin", session_timeout: 900 })
    expect((await getOrg()).body).toMatchObject({ time_zone: "Europe/Berlin", session_timeout: 900 })
  })

  it("sets both at once; the org is the same from the test key", async () => {
    const res = await patchOrg({ time_zone: "America/New_York", session_timeout: 86_400 })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ environment: "live", time_zone: "America/New_York", session_timeout: 86_400 })
    expect((await getOrg(org.api_key_test)).body).toMatchObject({
      environment: "test",
      time_zone: "America/New_York",
      session_timeout: 86_400
    })
  })

  it("a test key cannot change them where the plan has live keys (they apply to live data); below it, it can", async () => {
    const before = (await getOrg()).body
    const refused = await patchOrg({ time_zone: "Pacific/Kiritimati" }, org.api_key_test)
    expectEnvelope(refused, 403, "live_key_required")
    expect((await getOrg()).body).toEqual(before)
    const small = await bootstrapOrg(server.databaseUrl, "settings-developer", "developer")
    expect(small.api_key_live).toBeNull()
    const res = await patchOrg({ time_zone: "Europe/Oslo" }, small.api_key_test)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: small.org_id, time_zone: "Europe/Oslo" })
  })

  it("an empty body changes nothing", async () => {
    const before = (await getOrg()).body
    const res = await patchOrg({})
    expect(res.status).toBe(200)
    expect(res.body).toEqual(before)
  })

  it("accepts UTC, the bounds of the timeout, links missing from ICU's list, and any case of a name", async () => {
    expect((await patchOrg({ time_zone: "UTC", session_timeout: 60 })).body).toMatchObject({ time_zone: "UTC", session_timeout: 60 })
    expect((await patchOrg({ time_zone: "Asia/Kolkata" })).body.time_zone).toBe("Asia/Kolkata")
    expect((await patchOrg({ time_zone: "europe/berlin" })).body.time_zone).toBe("Europe/Berlin")
    expect((await getOrg()).body).toMatchObject({ time_zone: "Europe/Berlin", session_timeout: 60 })
  })

  it("changes only the caller's org", async () => {
    expect((await getOrg(other.api_key_test)).body).toMatchObject({ id: other.org_id, time_zone: "UTC", session_timeout: 1800 })
  })
})

describe("PATCH /api/v1/org refusals leave the org unchanged", () => {
  let before: unknown
  beforeAll(async () => {
    before = (await patchOrg({ time_zone: "Asia/Tokyo", session_timeout: 1200 })).body
  })

  it.each([
    ["an unknown zone", { time_zone: "Mars/Olympus" }, "time_zone"],
    ["a UTC offset", { time_zone: "+01:00" }, "time_zone"],
    ["an empty zone", { time_zone: "" }, "time_zone"],
    ["a timeout below 60 s", { session_timeout: 59 }, "session_timeout"],
    ["a timeout above a day", { session_timeout: 86_401 }, "session_timeout"],
    ["a negative timeout", { session_timeout: -5 }, "session_timeout"],
    ["a valid zone with a bad timeout", { time_zone: "Europe/Paris", session_timeout: 0 }, "session_timeout"],
    ["a goal-drift streak above 20", { drift_prompts: 21 }, "drift_prompts"],
    ["a negative goal-drift streak", { drift_prompts: -1 }, "drift_prompts"]
  ])("422 validation_error for %s", async (_name, body, field) => {
    const res = await patchOrg(body)
    expectEnvelope(res, 422, "validation_error")
    expect(res.body.error).toContain(`${field}:`)
    expect((await getOrg()).body).toEqual(before)
  })

  it("422 names every problem at once", async () => {
    const res = await patchOrg({ time_zone: "Nowhere/Land", session_timeout: 10 })
    expectEnvelope(res, 422, "validation_error")
    expect(res.body.error).toContain("time_zone:")
    expect(res.body.error).toContain("session_timeout:")
  })

  it.each([
    ["a string timeout", { session_timeout: "900" }],
    ["a fractional timeout", { session_timeout: 90.5 }],
    ["a numeric zone", { time_zone: 1 }],
    ["a null zone", { time_zone: null }],
    ["a fractional goal-drift streak", { drift_prompts: 2.5 }],
    ["a string goal-drift streak", { drift_prompts: "3" }],
    ["an unknown key", { name: "renamed" }],
    ["an unknown key next to a valid one", { time_zone: "Europe/Paris", plan: "enterprise" }],
    ["a body that is not an object", ["UTC"]]
  ])("400 invalid_parameters for %s", async (_name, body) => {
    const res = await patchOrg(body)
    expectEnvelope(res, 400, "invalid_parameters")
    expect((await getOrg()).body).toEqual(before)
  })

  it("403 insufficient_scope for a key with admin:read only", async () => {
    const created = await call(server, "POST", "/api/v1/api-keys", {
      key: org.api_key_test,
      body: { name: "auditor", scopes: ["admin:read"] }
    })
    expect(created.status).toBe(201)
    expect((await getOrg(created.body.key)).status).toBe(200)
    const res = await patchOrg({ time_zone: "Europe/Paris" }, created.body.key)
    expectEnvelope(res, 403, "insufficient_scope")
    expect((await getOrg()).body).toEqual(before)
  })

  it("401 without a key", async () => {
    const res = await call(server, "PATCH", "/api/v1/org", { body: { time_zone: "Europe/Paris" } })
    expectEnvelope(res, 401, "missing_api_key")
    expect((await getOrg()).body).toEqual(before)
  })
})
