import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, startServer, type TestServer, withStore } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

// Two nodes over one database, each caching key lookups for an hour: a change made through one
// node (or in the database directly) must reach the other through the change notices alone.
let a: TestServer
let b: TestServer

beforeAll(async () => {
  const databaseUrl = await freshDatabase()
  const env = { AUTH_CACHE_TTL: "1 hour" }
  a = await startServer({ databaseUrl, env })
  b = await startServer({ databaseUrl, env })
})
afterAll(async () => {
  await a?.stop()
  await b?.stop()
})

const signal = (node: TestServer, licenseKey: string) =>
  call(node, "POST", "/engine/v1/signals", {
    key: licenseKey,
    body: { type: "post-tool", adapter: "claude-code", session_id: "cache", metadata: { model: "gpt-4o" } }
  })

const setUp = async (name: string) => {
  const org = await bootstrapOrg(a.databaseUrl, name, "team")
  const admin = org.api_key_live!
  const user = async (email: string) => {
    const res = await call(a, "POST", "/api/v1/users", { key: admin, body: { email, name: email } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const key = await call(a, "POST", "/api/v1/license-keys", { key: admin, body: { user_id: res.body.id } })
    expect(key.status, JSON.stringify(key.body)).toBe(201)
    return { userId: res.body.id as string, keyId: key.body.id as string, key: key.body.key as string }
  }
  return { org, admin, user }
}

/** Waits until the node refuses the key, as a client sees it: 401 and the envelope's code. */
const refused = (node: TestServer, send: () => Promise<{ readonly status: number; readonly body: any }>, code: string) =>
  waitFor(send, (r) => r.status === 401, { timeoutMs: 10_000, what: `node ${node.port} to refuse the key` }).then((r) =>
    expect(r.body.error?.code ?? r.body.code).toBe(code)
  )

describe("key lookups cached for an hour, dropped on every node when what they resolved changes", () => {
  it("a license key revoked through one node is refused by the other, which had it cached", async () => {
    const { admin, user } = await setUp("cache-revoke")
    const u = await user("revoked@cache.dev")
    expect((await signal(b, u.key)).status).toBe(200)
    expect((await signal(a, u.key)).status).toBe(200)

    const revoked = await call(a, "DELETE", `/api/v1/license-keys/${u.keyId}`, { key: admin })
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(204)
    await refused(b, () => signal(b, u.key), "invalid_license_key")
    await refused(a, () => signal(a, u.key), "invalid_license_key")
  })

  it("an offboarded user's key, and a key an operator revokes with SQL, are refused by a node that had them cached", async () => {
    const { admin, user } = await setUp("cache-offboard")
    const leaver = await user("leaver@cache.dev")
    const other = await user("other@cache.dev")
    const stays = await user("stays@cache.dev")
    for (const k of [leaver.key, other.key, stays.key]) expect((await signal(b, k)).status).toBe(200)

    expect((await call(a, "DELETE", `/api/v1/users/${leaver.userId}`, { key: admin })).status).toBe(204)
    await refused(b, () => signal(b, leaver.key), "invalid_license_key")

    await withStore(
      a.databaseUrl,
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE license_keys SET revoked_at = now() WHERE id = ${other.keyId}`).pipe(Effect.orDie)
    )
    await refused(b, () => signal(b, other.key), "invalid_license_key")

    // The others' keys still work after the cache was dropped (looked up again).
    expect((await signal(b, stays.key)).status).toBe(200)
  })

  it("a management API key revoked through one node is refused by the other", async () => {
    const { org, admin } = await setUp("cache-api-key")
    const created = await call(a, "POST", "/api/v1/api-keys", {
      key: admin,
      body: { name: "ci", scopes: ["admin:read"] }
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const readOrg = () => call(b, "GET", "/api/v1/org", { key: created.body.key })
    expect((await readOrg()).status).toBe(200)
    expect((await call(a, "DELETE", `/api/v1/api-keys/${created.body.id}`, { key: admin })).status).toBe(204)
    await refused(b, readOrg, "invalid_api_key")
    expect((await call(b, "GET", "/api/v1/org", { key: org.api_key_live! })).status).toBe(200)
  })

  it("a node whose notice connection is cut drops what it cached: a key revoked meanwhile is refused", async () => {
    const { user } = await setUp("cache-cut")
    const u = await user("cut@cache.dev")
    expect((await signal(b, u.key)).status).toBe(200)
    await withStore(
      a.databaseUrl,
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.andThen(
          // Every node's listener of the notices goes (the connections are ended by the server), and
          // the key is revoked before they are back.
          sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid()
            AND query ILIKE '%LISTEN%signal_engine_principals%'`,
          sql`UPDATE license_keys SET revoked_at = now() WHERE id = ${u.keyId}`
        )).pipe(Effect.orDie)
    )
    await refused(b, () => signal(b, u.key), "invalid_license_key")
  })
})
