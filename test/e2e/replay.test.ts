import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, startServer, withStore } from "../support/harness.ts"
import { childEnv, logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

const run = promisify(execFile)
const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

/** Every projection row, in a stable order, as plain JSON. */
const snapshot = (databaseUrl: string) =>
  withStore(databaseUrl, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sessions = yield* sql`SELECT * FROM sessions ORDER BY id`
    const events = yield* sql`SELECT * FROM events ORDER BY id`
    const actors = yield* sql`SELECT user_id, partition, has_open_sessions, state FROM actor_state ORDER BY user_id`
    return JSON.parse(JSON.stringify({ sessions, events, actors }, (_k, v) => (typeof v === "bigint" ? v.toString() : v)))
  }))

describe.each(logVariants())("replay over %s", (_name, logEnv) => {
  it("rebuilds projections equal to the originals, sessions closed by timeout included", { timeout: 120_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const env = logEnv()
    const server = await startServer({ databaseUrl, env })
    const org = await bootstrapOrg(databaseUrl, "replay", "team")
    await withStore(databaseUrl, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE orgs SET session_timeout_s = 1 WHERE id = ${org.org_id}`
    }))
    const keys = [org.license_key]
    for (let i = 0; i < 3; i++) {
      const user = await call(server, "POST", "/api/v1/users", { key: org.api_key_live!, body: { email: `r${i}@replay.test`, name: `R${i}` } })
      keys.push((await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: user.body.id } })).body.key)
    }
    const send = (key: string, type: string, adapter: string, metadata: Record<string, unknown> = {}) =>
      call(server, "POST", "/engine/v1/signals", { key, body: { type, adapter, session_id: `${adapter}-1`, metadata } })

    let accepted = 0
    for (const [i, key] of keys.entries()) {
      for (let n = 0; n < 5; n++) {
        const res = await send(key, n === 0 ? "session-start" : "post-tool", i % 2 ? "cursor" : "claude-code", {
          model: n % 2 ? "gpt-4o" : "claude-sonnet-4", tokens_in: 100 * n, tokens_out: 10 * n, ...(n === 3 ? { error_code: "rate_limited" } : {})
        })
        expect(res.status).toBe(200)
        accepted++
      }
    }
    await send(keys[1]!, "session-end", "cursor")
    accepted++
    // Let the sessions time out (1 s), through tick records, then start new ones.
    await waitFor(
      () => call(server, "GET", "/api/v1/sessions?limit=100", { key: org.api_key_live! }),
      (r) => r.body.data.length === 4 && r.body.data.every((s: { status: string }) => s.status === "ended"),
      { what: "every session to end" }
    )
    // The sessions still open at the end must not time out while the service stops.
    await withStore(databaseUrl, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE orgs SET session_timeout_s = 1800 WHERE id = ${org.org_id}`
    }))
    for (const key of keys) {
      await send(key, "user-prompt", "codex", { prompt: "again" })
      accepted++
    }
    const before = await waitFor(() => snapshot(databaseUrl), (s) => s.events.length === accepted, { what: "all signals projected" })
    expect(before.sessions.filter((s: { end_reason: string }) => s.end_reason === "timeout")).toHaveLength(3)
    await server.stop()

    // Damage the projections, so only a real rebuild can bring them back.
    await withStore(databaseUrl, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM events WHERE type = 'post-tool'`
      yield* sql`UPDATE sessions SET signal_count = 0, ended_at = NULL, end_reason = NULL`
      yield* sql`DELETE FROM actor_state`
    }))
    expect(await snapshot(databaseUrl)).not.toEqual(before)

    const { stdout } = await run(process.execPath, [bin, "replay"], {
      env: { ...childEnv(env), DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1" }
    })
    expect(stdout).toMatch(new RegExp(`replayed \\d+ records of 4 partition\\(s\\)`))
    const after = await snapshot(databaseUrl)
    expect(after).toEqual(before)
  })
})
