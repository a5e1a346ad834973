import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Agent, request } from "node:http"
import { connect } from "node:net"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, startServer, withStore } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

interface Answer {
  readonly status: number
  readonly connection: string | undefined
  readonly body: { readonly ok?: boolean; readonly signal_id?: string; readonly action?: string }
}

/** Whether a new connection to the port is refused. */
const refused = (port: number) => () =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.on("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.on("error", () => resolve(true))
  })

describe("stopping under load", () => {
  it("answers every request it took with its verdict, not 503; the one it was serving when told to stop is answered and closes its keep-alive connection; every signal answered is kept", { timeout: 60_000 }, async () => {
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

    // One request the node is serving when it is told to stop: it sends `Expect: 100-continue`,
    // so the `100 Continue` says its handler is running; the body follows once the node no
    // longer takes connections, that is, once draining has begun.
    const heldAgent = new Agent({ keepAlive: true })
    let heldSocketClosed = false
    const continued = Promise.withResolvers<void>()
    const sendBody = Promise.withResolvers<void>()
    const held = new Promise<Answer>((resolve, reject) => {
      const req = request(`${server.baseUrl}/engine/v1/signals`, {
        method: "POST",
        agent: heldAgent,
        headers: {
          authorization: `Bearer ${org.license_key}`,
          "content-type": "application/json",
          expect: "100-continue"
        }
      }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) }))
      })
      req.on("socket", (socket) => socket.on("close", () => (heldSocketClosed = true)))
      req.on("continue", () => continued.resolve())
      req.on("error", reject)
      void sendBody.promise.then(() => req.end(JSON.stringify({ type: "post-tool", adapter: "drain", session_id: "held", metadata: { n: -1 } })))
    })
    await continued.promise

    const stopped = server.stop()
    await waitFor(refused(server.port), (r) => r, { what: "the node to stop taking connections" })
    sendBody.resolve()
    const heldAnswer = await held
    await loops
    await stopped
    agent.destroy()
    heldAgent.destroy()

    expect(answers.filter((a) => a.status !== 200).map((a) => a.status)).toEqual([])
    // The request it was serving when told to stop got its verdict, and the answer closed its
    // keep-alive connection.
    expect(heldAnswer.status).toBe(200)
    expect(heldAnswer.body.ok).toBe(true)
    expect(heldAnswer.connection).toBe("close")
    await waitFor(async () => heldSocketClosed, (c) => c, { what: "the held connection to close" })
    answers.push(heldAnswer)
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
