import { execFile } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, startServer, withStore } from "../support/harness.ts"
import { childEnv } from "../support/log-variants.ts"
import { startReceiver } from "../support/receiver.ts"
import { startSmtpServer } from "../support/smtp.ts"
import { waitFor } from "../support/wait.ts"
import { chatText, firingsIn, notificationEnv } from "./notifications-helpers.ts"

const run = promisify(execFile)
const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

const notificationRows = (databaseUrl: string) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM notifications`
      return rows[0]!.n
    })
  )

describe("notifications across a replay and a stricter URL policy", () => {
  it("a replay sends nothing; without the loopback allowance the channel's URL is refused, at the test endpoint too", { timeout: 120_000 }, async () => {
    const smtp = await startSmtpServer()
    const receiver = await startReceiver()
    try {
      const databaseUrl = await freshDatabase()
      const env: Record<string, string> = { ...notificationEnv(smtp.url), LOG_PARTITIONS: "4" }
      let server = await startServer({ databaseUrl, env })
      const org = await bootstrapOrg(databaseUrl, "ntf-replay", "team")
      const key = org.license_key_environment === "live" ? org.api_key_live! : org.api_key_test
      const ch = await call(server, "POST", "/api/v1/channels", {
        key,
        body: { name: "ops", kind: "slack", url: receiver.url, coalesce_seconds: 1 }
      })
      expect(ch.status).toBe(201)
      const mail = await call(server, "POST", "/api/v1/channels", { key, body: { name: "lead", kind: "email", addresses: ["lead@example.com"] } })
      const rule = await call(server, "POST", "/api/v1/rules", {
        key,
        body: {
          name: "watch",
          type: "model_filter",
          scope: "org",
          scope_id: org.org_id,
          condition: { model: { in: ["risky"] } },
          action: "notify",
          action_config: { channels: [ch.body.id, mail.body.id] }
        }
      })
      expect(rule.status).toBe(201)
      for (let i = 0; i < 3; i++) {
        const res = await call(server, "POST", "/engine/v1/signals", {
          key: org.license_key,
          body: { type: "post-tool", adapter: "cursor", session_id: "r", metadata: { model: "risky" } }
        })
        expect(res.body.action).toBe("notify")
      }
      const counted = () => receiver.received.reduce((n, r) => n + firingsIn(chatText("slack", JSON.parse(r.body))), 0)
      await waitFor(async () => counted(), (n) => n >= 3, { what: "messages covering the three firings" })
      await waitFor(async () => smtp.received.length, (n) => n >= 1, { what: "the e-mail" })
      const sent = { chat: receiver.received.length, mail: smtp.received.length, rows: await notificationRows(databaseUrl) }
      await server.stop()

      await run(process.execPath, [bin, "replay"], { env: { ...childEnv(env), DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1" } })
      server = await startServer({ databaseUrl, env })
      // Checks that nothing is sent, so it waits: many dispatcher rounds (poll 20 ms) over the
      // rebuilt projections, after which nothing new was sent and no row was added.
      await new Promise((r) => setTimeout(r, 1500))
      expect({ chat: receiver.received.length, mail: smtp.received.length, rows: await notificationRows(databaseUrl) }).toEqual(sent)
      await server.stop()

      // The same database, served without WEBHOOK_ALLOWED_HOSTS: the loopback URL is refused everywhere.
      const { WEBHOOK_ALLOWED_HOSTS: _allowed, ...strict } = env
      server = await startServer({ databaseUrl, env: strict })
      try {
        const tested = await call(server, "POST", `/api/v1/channels/${ch.body.id}/test`, { key })
        expect(tested.status).toBe(200)
        expect(tested.body).toMatchObject({ delivered: false, status_code: null, error: expect.stringContaining("url refused") })
        const again = await call(server, "POST", "/api/v1/channels", { key, body: { name: "x", kind: "slack", url: receiver.url } })
        expect(again.status).toBe(422)
        expect(again.body).toMatchObject({ code: "url_not_allowed", status: 422 })
        const patched = await call(server, "PATCH", `/api/v1/channels/${ch.body.id}`, { key, body: { url: "https://127.0.0.1/other" } })
        expect(patched.body).toMatchObject({ code: "url_not_allowed" })
        expect(receiver.received).toHaveLength(sent.chat)
      } finally {
        await server.stop()
      }
    } finally {
      await receiver.close()
      await smtp.close()
    }
  })
})
