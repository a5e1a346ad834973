import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { usersWithKeys } from "../support/cluster.ts"

/**
 * The engine API's per-key and per-org limits, scaled down (ENGINE_RATE_LIMIT_SCALE 0.02): a team
 * key may send bursts of 20 signals, refilled at 1 a second; its org 1,000 at 20 a second.
 */
describe("engine API rate limits", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ env: { LOG_PARTITIONS: "4", ENGINE_RATE_LIMIT_SCALE: "0.02" } })
  })
  afterAll(() => server?.stop())

  const signal = (key: string, n = 0) =>
    call(server, "POST", "/engine/v1/signals", { key, body: { type: "post-tool", adapter: `flood-${n}`, session_id: "s", metadata: { tokens_in: 1 } } })

  it("a key past its burst is refused 429 with Retry-After, takes nothing, and leaves other keys served", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "limits", "team")
    const [other] = await usersWithKeys(server, org, 1, "limits.test")
    const answers = []
    for (let i = 0; i < 40; i++) answers.push(await signal(org.license_key, i))
    const statuses = answers.map((a) => a.status)
    // 20 at once, and a few more refilled meanwhile (1 a second).
    const accepted = statuses.filter((s) => s === 200).length
    expect(accepted).toBeGreaterThanOrEqual(20)
    expect(accepted).toBeLessThan(40)
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(200))
    const refused = answers.find((a) => a.status === 429)!
    expect(refused.body).toMatchObject({ code: "rate_limited", status: 429 })
    expect(refused.body.error).toMatch(/this license key/)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    for (const a of answers) {
      expect(a.headers.get("x-ratelimit-limit")).toBe("20")
      expect(a.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
      expect(a.headers.get("x-ratelimit-reset")).toMatch(/^\d+$/)
    }
    expect(answers[0]!.headers.get("x-ratelimit-remaining")).toBe("19")
    // The other user's key of the same org is served as before.
    expect((await signal(other!.key)).status).toBe(200)
    // Only what was accepted was recorded.
    const events = await call(server, "GET", `/api/v1/events?user_id=${org.user_id}&limit=100`, { key: org.api_key_live! })
    expect(events.body.data).toHaveLength(accepted)
  })

  it("a batch counts its signals, and one larger than the burst is refused whole", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "limits-batch", "team")
    const batch = (n: number) =>
      call(server, "POST", "/engine/v1/signals/batch", {
        key: org.license_key,
        body: { signals: Array.from({ length: n }, (_, i) => ({ type: "post-tool", adapter: "b", session_id: `s${i}` })) }
      })
    const tooBig = await batch(21)
    expect(tooBig.status).toBe(429)
    expect(tooBig.body.error).toMatch(/send fewer per request/)
    const fits = await batch(15)
    expect(fits.status).toBe(200)
    expect(fits.headers.get("x-ratelimit-remaining")).toMatch(/^[5-9]$/)
    const over = await batch(19)
    expect(over.status).toBe(429)
    const events = await call(server, "GET", `/api/v1/events?limit=100`, { key: org.api_key_live! })
    expect(events.body.data).toHaveLength(15)
  })

  it("a key with nothing left is refused before its body is read", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "limits-unread", "team")
    const drained = await call(server, "POST", "/engine/v1/signals/batch", {
      key: org.license_key,
      body: { signals: Array.from({ length: 20 }, (_, i) => ({ type: "post-tool", adapter: "d", session_id: `s${i}` })) }
    })
    expect(drained.status).toBe(200)
    // Not JSON, which would be a 400 were it read: a 429 says it was not.
    for (const path of ["/engine/v1/signals", "/engine/v1/signals/batch"]) {
      const unread = await call(server, "POST", path, { key: org.license_key, rawBody: "{not json", contentType: "application/json" })
      expect(unread.status, path).toBe(429)
      expect(unread.body.code).toBe("rate_limited")
    }
  })

  it("an org's keys together are held to the org's limit", async () => {
    const org = await bootstrapOrg(server.databaseUrl, "limits-org", "team")
    const users = await usersWithKeys(server, org, 60, "limits-org.test")
    // 60 keys x 20 signals: the org's 1,000 (and what refills meanwhile) run out first.
    const results = []
    for (const u of users) {
      results.push(
        await call(server, "POST", "/engine/v1/signals/batch", {
          key: u.key,
          body: { signals: Array.from({ length: 20 }, (_, i) => ({ type: "post-tool", adapter: "o", session_id: `s${i}` })) }
        })
      )
    }
    expect(results.slice(0, 50).map((r) => r.status)).toEqual(Array(50).fill(200))
    const refused = results.filter((r) => r.status === 429)
    expect(refused.length).toBeGreaterThan(0)
    for (const r of refused) expect(r.body.error).toMatch(/this org/)
  })
})
