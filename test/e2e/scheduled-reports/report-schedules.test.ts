import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, startServer, type TestServer } from "../../support/harness.ts"
import { api, reportEnv } from "./report-helpers.ts"

let server: TestServer
let orgs = 0
beforeAll(async () => {
  server = await startServer({ env: reportEnv })
})
afterAll(() => server?.stop())

const newOrg = () => bootstrapOrg(server.databaseUrl, `rs-${++orgs}`, "team")
const channel = async (org: Bootstrapped) => {
  const res = await api(server, org, "POST", "/channels", { name: "finance", kind: "slack", url: "http://127.0.0.1:9/room" })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.id as string
}

/** The local weekday, day of month and time of an instant in a time zone, as people there read it. */
const local = (iso: string, timeZone: string) => {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    weekday: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23"
  }).formatToParts(new Date(iso))
  const part = (type: string) => parts.find((p) => p.type === type)!.value
  return { weekday: part("weekday"), day: part("day"), time: `${part("hour")}:${part("minute")}` }
}

describe("report schedules API", () => {
  it("creates, lists, gets, updates and deletes schedules; the next report is due when the period ends in the org's zone", async () => {
    const org = await newOrg()
    expect((await api(server, org, "PATCH", "/org", { time_zone: "America/New_York" })).status).toBe(200)
    const ch = await channel(org)
    const created = await api(server, org, "POST", "/report-schedules", { name: "Weekly spend", period: "weekly", channels: [ch, ch] })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body).toEqual({
      id: expect.stringMatching(/^rs_/),
      name: "Weekly spend",
      period: "weekly",
      channels: [ch],
      enabled: true,
      next_due_at: expect.any(String),
      last_sent_at: null,
      created_at: expect.any(String),
      updated_at: null
    })
    const due = created.body.next_due_at as string
    expect(Date.parse(due)).toBeGreaterThan(Date.now())
    expect(Date.parse(due) - Date.now()).toBeLessThanOrEqual(7 * 86_400_000 + 3_600_000)
    expect(local(due, "America/New_York")).toMatchObject({ weekday: "Mon", time: "00:00" })

    const id = created.body.id as string
    const list = await api(server, org, "GET", "/report-schedules?limit=1")
    expect(list.body).toEqual({ data: [created.body], cursor: "", has_more: false })
    expect((await api(server, org, "GET", `/report-schedules/${id}`)).body).toEqual(created.body)

    const monthly = await api(server, org, "PATCH", `/report-schedules/${id}`, { period: "monthly", enabled: false })
    expect(monthly.status, JSON.stringify(monthly.body)).toBe(200)
    expect(monthly.body).toMatchObject({ period: "monthly", enabled: false, name: "Weekly spend", updated_at: expect.any(String) })
    expect(local(monthly.body.next_due_at, "America/New_York")).toMatchObject({ day: "1", time: "00:00" })
    const renamed = await api(server, org, "PATCH", `/report-schedules/${id}`, { name: "Finance" })
    expect(renamed.body).toMatchObject({ name: "Finance", next_due_at: monthly.body.next_due_at })

    expect((await api(server, org, "DELETE", `/report-schedules/${id}`)).status).toBe(204)
    const gone = await api(server, org, "GET", `/report-schedules/${id}`)
    expect(gone.status).toBe(404)
    expect(gone.body).toMatchObject({ code: "not_found", status: 404, request_id: expect.any(String) })
  })

  it("refuses what cannot be sent (422), bad bodies (400), and another org's schedule (404)", async () => {
    const org = await newOrg()
    const other = await newOrg()
    const ch = await channel(org)
    const theirs = await channel(other)
    const cases: ReadonlyArray<[unknown, number, RegExp]> = [
      [{ name: "x", period: "weekly", channels: [] }, 422, /channels: name at least one/],
      [{ name: "x", period: "weekly", channels: [theirs] }, 422, new RegExp(`no channel ${theirs}`)],
      [{ name: "  ", period: "weekly", channels: [ch] }, 422, /name: must not be blank/],
      [{ name: "x", period: "daily", channels: [ch] }, 400, /period/],
      [{ name: "x", period: "weekly", channels: [ch], hour: 9 }, 400, /hour/],
      [{ name: "a\u0000b", period: "weekly", channels: [ch] }, 400, /U\+0000/]
    ]
    for (const [body, status, message] of cases) {
      const res = await api(server, org, "POST", "/report-schedules", body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect(res.body.code).toBe(status === 422 ? "validation_error" : "invalid_parameters")
      expect(res.body.error).toMatch(message)
    }
    // An id PostgreSQL cannot store is refused, not a server error.
    expect([400, 404]).toContain((await api(server, org, "GET", "/report-schedules/rs_%00")).status)
    const mine = await api(server, org, "POST", "/report-schedules", { name: "mine", period: "monthly", channels: [ch] })
    for (const [method, body] of [["GET", undefined], ["PATCH", { name: "taken" }], ["DELETE", undefined]] as const) {
      const res = await api(server, other, method, `/report-schedules/${mine.body.id}`, body)
      expect(res.status, method).toBe(404)
      expect(res.body.code).toBe("not_found")
    }
    const foreignChannel = await api(server, org, "PATCH", `/report-schedules/${mine.body.id}`, { channels: [theirs] })
    expect(foreignChannel.status).toBe(422)
    expect((await api(server, org, "GET", `/report-schedules/${mine.body.id}`)).body.channels).toEqual([ch])
    // A channel deleted since does not stop a rename or a pause (its reports skip it).
    expect((await api(server, org, "DELETE", `/channels/${ch}`)).status).toBe(204)
    const paused = await api(server, org, "PATCH", `/report-schedules/${mine.body.id}`, { name: "renamed", enabled: false })
    expect(paused.status, JSON.stringify(paused.body)).toBe(200)
    expect(paused.body).toMatchObject({ name: "renamed", enabled: false, channels: [ch] })
  })
})
