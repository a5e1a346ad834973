import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, type JsonResponse, startServer, type TestServer, withStore } from "../support/harness.ts"

let nodeA: TestServer
let nodeB: TestServer

beforeAll(async () => {
  // Two nodes of one cluster: separate servers over the same database.
  const databaseUrl = await freshDatabase()
  nodeA = await startServer({ databaseUrl })
  nodeB = await startServer({ databaseUrl })
})
afterAll(async () => {
  await nodeA?.stop()
  await nodeB?.stop()
})

const expectRateHeaders = (res: JsonResponse) => {
  for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
    expect(res.headers.get(name), name).toMatch(/^\d+$/)
  }
}

/** The window a response was counted in: when it resets (Unix seconds), as X-RateLimit-Reset says. */
const windowOf = (res: JsonResponse) => res.headers.get("x-ratelimit-reset")

/**
 * Limits count in fixed windows on the database clock, so a run that straddles a boundary starts
 * a fresh window halfway. Runs `attempt` until every response it answers was counted in one
 * window, whatever the second it starts at; a run that straddled a boundary is run again, after
 * `again` (given the last window it reached) has made the bucket fresh.
 */
const inOneWindow = async <A extends { readonly responses: ReadonlyArray<JsonResponse> }>(
  attempt: (run: number) => Promise<A>,
  again: (reached: number) => Promise<void> = async () => undefined
): Promise<A> => {
  for (let run = 1;; run++) {
    const answered = await attempt(run)
    const windows = new Set(answered.responses.map(windowOf))
    // A response without the header is for the assertions to name.
    if (windows.size === 1 || windows.has(null)) return answered
    if (run === 3) throw new Error(`three runs straddled a window boundary: ${[...windows].join(", ")}`)
    await again(Math.max(...[...windows].map(Number)))
  }
}

/** Waits until the database clock has passed `reset` (Unix seconds): that window is over. */
const windowEnded = (databaseUrl: string, reset: number) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (;;) {
        const rows = yield* sql<{ readonly now: number }>`SELECT extract(epoch FROM now())::float8 AS now`
        const now = rows[0]!.now
        if (now >= reset) return
        yield* Effect.sleep(`${Math.ceil((reset - now) * 1000)} millis`)
      }
    })
  )

const burst = async (count: number, send: (i: number) => Promise<JsonResponse>) => {
  const results: Array<JsonResponse> = []
  for (let i = 0; i < count; i += 20) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(20, count - i) }, (_, j) => send(i + j)))))
  }
  return results
}

/** An org's own hourly limit, as an enterprise contract sets it. */
const setHourlyLimit = (orgId: string, perHour: number) =>
  withStore(nodeA.databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE orgs SET rate_limit_per_hour = ${perHour} WHERE id = ${orgId}`))

describe("management rate limits", { timeout: 90_000 }, () => {
  it("team plan: 600 requests a minute pass, the 601st gets 429 with Retry-After; every response has the headers", async () => {
    // A run that straddled a minute is run again with an org of its own: a fresh bucket.
    const { results, refused, refusedAt, testEnvironment, other } = await inOneWindow(async (run) => {
      const org = await bootstrapOrg(nodeA.databaseUrl, `team-org-${run}`, "team")
      const results = await burst(600, (i) => call(i % 2 === 0 ? nodeA : nodeB, "GET", "/api/v1/org", { key: org.api_key_live! }))
      const refused = await call(nodeB, "GET", "/api/v1/org", { key: org.api_key_live! })
      const refusedAt = Date.now() / 1000
      const testEnvironment = await call(nodeA, "GET", "/api/v1/org", { key: org.api_key_test })
      const otherOrg = await bootstrapOrg(nodeA.databaseUrl, `other-org-${run}`, "team")
      const other = await call(nodeA, "GET", "/api/v1/org", { key: otherOrg.api_key_live! })
      return { results, refused, refusedAt, testEnvironment, other, responses: [...results, refused, testEnvironment, other] }
    })
    expect(results.map((r) => r.status).filter((s) => s !== 200)).toEqual([])
    results.forEach(expectRateHeaders)
    expect(results.every((r) => r.headers.get("x-ratelimit-limit") === "600")).toBe(true)
    const remaining = results.map((r) => Number(r.headers.get("x-ratelimit-remaining"))).sort((a, b) => a - b)
    expect(remaining[0]).toBe(0)
    expect(remaining[599]).toBe(599)

    expect(refused.status).toBe(429)
    expect(refused.body).toMatchObject({ code: "rate_limited", status: 429 })
    expect(refused.body.request_id).toMatch(/^req_/)
    expectRateHeaders(refused)
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0")
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    const reset = Number(refused.headers.get("x-ratelimit-reset"))
    expect(reset % 60).toBe(0)
    expect(Math.abs(reset - refusedAt - retryAfter)).toBeLessThanOrEqual(2)

    // The test environment of the same org counts separately, and so does another org.
    expect(testEnvironment.status).toBe(200)
    expect(other.status).toBe(200)
  })

  it("lite plan: 60 a minute, counted across both nodes", async () => {
    // A run that straddled a minute is run again with an org of its own: a fresh bucket.
    const { results, refused } = await inOneWindow(async (run) => {
      const org = await bootstrapOrg(nodeA.databaseUrl, `lite-org-${run}`, "lite")
      const results = await burst(60, (i) => call(i % 2 === 0 ? nodeA : nodeB, "GET", "/api/v1/org", { key: org.api_key_test }))
      const refused = await call(nodeA, "GET", "/api/v1/org", { key: org.api_key_test })
      return { results, refused, responses: [...results, refused] }
    })
    expect(results.every((r) => r.status === 200 && r.headers.get("x-ratelimit-limit") === "60")).toBe(true)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/)
  })

  it("an org's own limit overrides the plan's (enterprise contracts)", async () => {
    const org = await bootstrapOrg(nodeA.databaseUrl, "enterprise-org", "enterprise")
    await setHourlyLimit(org.org_id, 5)
    const results = await burst(6, () => call(nodeA, "GET", "/api/v1/org", { key: org.api_key_live! }))
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 429])
    expect(results.every((r) => r.headers.get("x-ratelimit-limit") === "5")).toBe(true)
    const org429 = results.find((r) => r.status === 429)!
    expect(Number(org429.headers.get("retry-after"))).toBeLessThanOrEqual(3600)
  })

  it("a management path in another case or with repeated slashes counts like any other", async () => {
    const org = await bootstrapOrg(nodeA.databaseUrl, "spelling-org", "enterprise")
    await setHourlyLimit(org.org_id, 4)
    const results = []
    for (const path of ["/api/v1/org", "/API/V1/org", "//api/v1/org", "/Api//v1/org", "/api/v1/org"]) {
      results.push(await call(nodeA, "GET", path, { key: org.api_key_live! }))
    }
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 429])
    expect(results.map((r) => r.headers.get("x-ratelimit-remaining"))).toEqual(["3", "2", "1", "0", "0"])
  })

  it("errors carry the headers too: 401, 404, 405", async () => {
    for (const [method, path] of [["GET", "/api/v1/org"], ["GET", "/api/v1/nope"], ["DELETE", "/api/v1/org"]] as const) {
      const res = await call(nodeA, method, path)
      expect(res.status).toBeGreaterThanOrEqual(400)
      expectRateHeaders(res)
    }
  })

  it("no key is 401 however often (absence is not throttled); wrong keys are, per address", async () => {
    const none = await burst(80, () => call(nodeA, "GET", "/api/v1/org"))
    expect(none.map((r) => r.status)).toEqual(Array(80).fill(401))
    for (const r of none) expectRateHeaders(r)
    // 60 wrong keys a minute from one address: the 61st attempt is refused before any lookup. The
    // bucket is the address, the same for every run: a run that straddled a minute left attempts
    // in the minute it ran into, so the next run waits for the one after.
    const { wrong, after } = await inOneWindow(async () => {
      const wrong = await burst(61, (i) => call(nodeA, "GET", "/api/v1/org", { key: `sek_live_${String(i).padStart(32, "0")}` }))
      // Still 401 without a key, and the remaining count says where the wrong keys left it.
      const after = await call(nodeB, "GET", "/api/v1/org")
      return { wrong, after, responses: [...wrong, after] }
    }, (reached) => windowEnded(nodeA.databaseUrl, reached))
    expect(wrong.slice(0, 60).map((r) => r.status)).toEqual(Array(60).fill(401))
    expect(wrong[60]!.status).toBe(429)
    expect(wrong[60]!.headers.get("retry-after")).toMatch(/^\d+$/)
    expect(after.status).toBe(401)
    expect(after.headers.get("x-ratelimit-remaining")).toBe("0")
  })

  it("the engine surface has no management rate-limit headers", async () => {
    const res = await call(nodeA, "GET", "/engine/v1/me")
    expect(res.headers.get("x-ratelimit-limit")).toBeNull()
  })
})
