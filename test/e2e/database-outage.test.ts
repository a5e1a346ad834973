import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../src/store/embedded-postgres.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

/** What adapters wait for an answer before they give up (their default timeout). */
const adapterTimeoutMs = 3_000

/**
 * PostgreSQL stopped under a running service and started again: every request is answered in
 * time with the envelope (503 `database_unavailable`, Retry-After, the request id), a request
 * without a key stays 401, and the service serves again once the database is back, unrestarted.
 */
describe("a PostgreSQL outage", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "se-outage-"))
  // Traversable by the postgres user that runs the cluster when the tests run as root.
  chmodSync(dataDir, 0o755)
  let pg: EmbeddedPostgres | undefined
  let server: TestServer | undefined
  afterAll(async () => {
    await server?.stop()
    await pg?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  const timed = async (path: string, key?: string) => {
    const started = performance.now()
    const res = await call(server!, "GET", path, key === undefined ? {} : { key })
    return { ...res, ms: performance.now() - started }
  }

  it("is answered 503 database_unavailable on both surfaces, 401 without a key, and recovered from unrestarted", { timeout: 120_000 }, async () => {
    const port = await freePort()
    pg = await startEmbeddedPostgres({ dataDir, port, ephemeral: true })
    server = await startServer({ databaseUrl: pg.url })
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

    pg = await startEmbeddedPostgres({ dataDir, port, ephemeral: true })
    const back = await waitFor(() => timed("/api/v1/rules", org.api_key_live!), (r) => r.status === 200, {
      timeoutMs: 30_000,
      what: "the management API to serve again"
    })
    expect(back.headers.get("x-ratelimit-limit")).not.toBeNull()
    expect((await timed("/engine/v1/sessions", org.license_key)).status).toBe(200)
  })
})
