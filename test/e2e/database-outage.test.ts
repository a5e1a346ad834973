import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../src/store/embedded-postgres.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

/** What adapters wait for an answer before they give up (their default timeout). */
const adapterTimeoutMs = 3_000

/** A PostgreSQL of the suite's own, to stop and start again on the same port, and the service on it. */
const outageWorld = () => {
  const dataDir = mkdtempSync(join(tmpdir(), "se-outage-"))
  // Traversable by the postgres user that runs the cluster when the tests run as root.
  chmodSync(dataDir, 0o755)
  const world: { pg?: EmbeddedPostgres; server?: TestServer; port?: number } = {}
  afterAll(async () => {
    await world.server?.stop()
    await world.pg?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const startPostgres = async () => {
    world.port ??= await freePort()
    world.pg = await startEmbeddedPostgres({ dataDir, port: world.port, ephemeral: true })
    return world.pg
  }
  return { world, startPostgres }
}

/**
 * PostgreSQL stopped under a running service and started again: every request is answered in
 * time with the envelope (503 `database_unavailable`, Retry-After, the request id), a request
 * without a key stays 401, and the service serves again once the database is back, unrestarted.
 */
describe("a PostgreSQL outage", () => {
  const { world, startPostgres } = outageWorld()
  const timed = async (path: string, key?: string) => {
    const started = performance.now()
    const res = await call(world.server!, "GET", path, key === undefined ? {} : { key })
    return { ...res, ms: performance.now() - started }
  }

  it("is answered 503 database_unavailable on both surfaces, 401 without a key, and recovered from unrestarted", { timeout: 120_000 }, async () => {
    const pg = await startPostgres()
    world.server = await startServer({ databaseUrl: pg.url })
    const org = await bootstrapOrg(pg.url, "outage", "team")
    expect((await timed("/api/v1/rules", org.api_key_live!)).status).toBe(200)

    await pg.stop()
    for (const [path, key] of [["/api/v1/rules", org.api_key_live!], ["/api/v1/sessions", org.api_key_live!], ["/engine/v1/sessions", org.license_key]] as const) {
      const res = await timed(path, key)
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(503)
      expect(res.body).toEqual({
        error: expect.stringContaining("database is unavailable"),
        code: "database_unavailable",
        status: 503,
        request_id: expect.stringMatching(/^req_/)
      })
      expect(res.headers.get("x-request-id")).toBe(res.body.request_id)
      expect(res.headers.get("retry-after")).toBe("2")
      expect(res.ms, path).toBeLessThan(adapterTimeoutMs)
    }
    const anonymous = await timed("/api/v1/rules")
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ code: "missing_api_key", status: 401, request_id: expect.stringMatching(/^req_/) })

    await startPostgres()
    const back = await waitFor(() => timed("/api/v1/rules", org.api_key_live!), (r) => r.status === 200, {
      timeoutMs: 30_000,
      what: "the management API to serve again"
    })
    expect(back.headers.get("x-ratelimit-limit")).not.toBeNull()
    expect((await timed("/engine/v1/sessions", org.license_key)).status).toBe(200)
  })
})

/**
 * Over Kafka the log does not need PostgreSQL: a license key verified before the outage goes on
 * being accepted from the node's cache (AUTH_OUTAGE_GRACE), its signals judged and appended, and
 * every signal answered ok is in the projections once the database is back. A key never seen
 * before cannot be verified: 503 database_unavailable.
 */
describe("a PostgreSQL outage over Kafka", () => {
  const { world, startPostgres } = outageWorld()

  it("keeps accepting signals of keys verified before it, and loses none of them", { timeout: 120_000 }, async () => {
    const pg = await startPostgres()
    const kafka = logVariants().find(([name]) => name === "KafkaLog")![1]()
    const server = await startServer({ databaseUrl: pg.url, env: { ...kafka, AUTH_CACHE_TTL: "10 minutes" } })
    world.server = server
    const org = await bootstrapOrg(pg.url, "outage-kafka", "team")
    const other = await call(server, "POST", "/api/v1/users", { key: org.api_key_live!, body: { email: "late@outage.test", name: "Late" } })
    const unseen = (await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: other.body.id } })).body.key
    const send = (key: string, n: number) =>
      call(server, "POST", "/engine/v1/signals", { key, body: { type: "post-tool", adapter: "codex", session_id: "outage", metadata: { n, tokens_in: 10 } } })
    expect((await send(org.license_key, 0)).body.ok).toBe(true)

    await pg.stop()
    const during = []
    for (let n = 1; n <= 5; n++) during.push(await send(org.license_key, n))
    for (const res of during) {
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.ok).toBe(true)
    }
    const refused = await send(unseen, 1)
    expect(refused.status).toBe(503)
    expect(refused.body.code).toBe("database_unavailable")

    await startPostgres()
    const ids = during.map((r) => r.body.signal_id as string)
    await waitFor(async () => {
      const found = await Promise.all(ids.map((id) => call(server, "GET", `/api/v1/events/evt_${id.slice(4)}`, { key: org.api_key_live! })))
      return found.map((r) => r.status)
    }, (statuses) => statuses.every((s) => s === 200), { timeoutMs: 30_000, what: "every signal answered ok during the outage" })
  })
})
