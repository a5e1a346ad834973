import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Agent, request } from "node:http"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, startServer, withStore } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

interface Answer {
  readonly status: number
  readonly connection: string | undefined
  readonly body: { readonly ok?: boolean; readonly signal_id?: string; readonly action?: string }
}

describe("stopping under load", () => {
  it("answers every request it took with its verdict, not 503; its keep-alive connections close; every signal answered is kept", { timeout: 60_000 }, async () => {
    const server = await startServer()
    const org = await bootstrapOrg(server.databaseUrl, "drain", "team")
    const agent = new Agent({ keepAlive: true, maxSockets: 16 })
    const answers: Array<Answer> = []
    /** One signal over the keep-alive agent; undefined once the node no longer takes requests. */
    const post = (n: number) =>
      new Promise<Answer | undefined>((resolve) => {
        const body = JSON.stringify({ type: "post-tool", adapter: "drain", session_id: `d-${n % 16}`, metadata: { tokens_in: 1, n } })
        const req = request(`${server.baseUrl}/engine/v1/signals`, {
          method: "POST",
          agent,
          headers: { authorization: `Bearer ${org.license_key}`, "content-type": "application/json" }
        }, (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => (text += chunk))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text === "" ? {} : JSON.parse(text) }))
          res.on("error", () => resolve(undefined))
        })
        req.on("error", () => resolve(undefined))
        req.end(body)
      })
    let sent = 0
    const loop = async () => {
      for (;;) {
        const answer = await post(sent++)
        if (answer === undefined) return
        answers.push(answer)
      }
    }
    const loops = Promise.all(Array.from({ length: 16 }, loop))
    await waitFor(async () => answers.length, (n) => n >= 300, { what: "load on the node" })
    const stopped = server.stop()
    await loops
    await stopped
    agent.destroy()

    expect(answers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual([])
    // The answers given while draining told the client to close the connection.
    expect(answers.some((a) => a.connection === "close")).toBe(true)
    const ids = answers.map((a) => a.body.signal_id!)
    const logged = await withStore(server.databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly id: string }>`SELECT record->>'signal_id' AS id FROM signal_log WHERE record->>'signal_id' IN ${sql.in(ids)}`))
    expect(logged.length).toBe(ids.length)
    const processed = answers.filter((a) => a.body.action !== "pending").map((a) => a.body.signal_id!)
    const events = await withStore(server.databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly id: string }>`SELECT signal_id AS id FROM events WHERE signal_id IN ${sql.in(processed)}`))
    expect(events.length).toBe(processed.length)
  })
})
