import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Agent, type ClientRequest, request } from "node:http"
import type { Socket } from "node:net"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, startServer, withStore } from "../support/harness.ts"
import { connectionRefused } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

interface Answer {
  readonly status: number
  readonly connection: string | undefined
  readonly body: { readonly ok?: boolean; readonly signal_id?: string; readonly action?: string }
}

/**
 * Posts one signal over `agent`. `options.onRequest` sees the request before it is sent;
 * `options.bodyAfter` holds the body back until it settles (headers go out at once).
 */
const postSignal = (
  baseUrl: string,
  licenseKey: string,
  agent: Agent,
  signal: object,
  options: { readonly headers?: Record<string, string>; readonly onRequest?: (req: ClientRequest) => void; readonly bodyAfter?: Promise<void> } = {}
) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request(`${baseUrl}/engine/v1/signals`, {
      method: "POST",
      agent,
      headers: { authorization: `Bearer ${licenseKey}`, "content-type": "application/json", ...options.headers }
    }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: text === "" ? {} : JSON.parse(text) }))
      res.on("error", reject)
    })
    req.on("error", reject)
    options.onRequest?.(req)
    const body = JSON.stringify(signal)
    if (options.bodyAfter === undefined) req.end(body)
    else void options.bodyAfter.then(() => req.end(body))
  })

/** Whether a new connection to the port is refused. */
const refused = (port: number) => () => connectionRefused(port)

describe("stopping under load", () => {
  it(
    "answers every request it took with its verdict, not 503; the one it was serving when told to stop is answered and closes its keep-alive connection; every signal answered is kept",
    { timeout: 60_000 },
    async () => {
      const server = await startServer()
      const org = await bootstrapOrg(server.databaseUrl, "drain", "team")
      const agent = new Agent({ keepAlive: true, maxSockets: 16 })
      const answers: Array<Answer> = []
      /** One signal over the keep-alive agent; undefined once the node no longer takes requests. */
      const post = (n: number): Promise<Answer | undefined> =>
        postSignal(server.baseUrl, org.license_key, agent, { type: "post-tool", adapter: "drain", session_id: `d-${n % 16}`, metadata: { tokens_in: 1, n } })
          .catch(() => undefined)
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
      const held = postSignal(server.baseUrl, org.license_key, heldAgent, { type: "post-tool", adapter: "drain", session_id: "held", metadata: { n: -1 } }, {
        headers: { expect: "100-continue" },
        onRequest: (req) => {
          req.on("socket", (socket) => socket.on("close", () => (heldSocketClosed = true)))
          req.on("continue", () => continued.resolve())
        },
        bodyAfter: sendBody.promise
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
      const logged = await withStore(
        server.databaseUrl,
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql<{ readonly id: string }>`SELECT record->>'signal_id' AS id FROM signal_log WHERE record->>'signal_id' IN ${sql.in(ids)}`
        )
      )
      expect(logged.length).toBe(ids.length)
      const processed = answers.filter((a) => a.body.action !== "pending").map((a) => a.body.signal_id!)
      const events = await withStore(
        server.databaseUrl,
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly id: string }>`SELECT signal_id AS id FROM events WHERE signal_id IN ${sql.in(processed)}`)
      )
      expect(events.length).toBe(processed.length)
    }
  )

  it("answers a request sent over an idle keep-alive connection as it stops, instead of resetting it", { timeout: 60_000 }, async () => {
    const server = await startServer({ env: { SHUTDOWN_IDLE_GRACE: "3 seconds" } })
    const org = await bootstrapOrg(server.databaseUrl, "idle", "team")
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const sockets = new Set<Socket>()
    const post = (n: number) =>
      postSignal(server.baseUrl, org.license_key, agent, { type: "post-tool", adapter: "idle", session_id: "s", metadata: { n } }, {
        onRequest: (req) => req.on("socket", (socket) => sockets.add(socket))
      })
    const first = await post(1)
    expect(first.connection).toBe("keep-alive")
    // The connection is idle now. The node stops; once it refuses new connections, a signal
    // goes out over the idle one.
    const stopped = server.stop()
    await waitFor(refused(server.port), (r) => r, { what: "the node to stop taking connections" })
    const second = await post(2)
    await stopped
    agent.destroy()

    expect(sockets.size).toBe(1)
    expect(second.status).toBe(200)
    expect(second.body.ok).toBe(true)
    expect(second.connection).toBe("close")
    const logged = await withStore(
      server.databaseUrl,
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ readonly id: string }>`SELECT record->>'signal_id' AS id FROM signal_log WHERE record->>'signal_id' IN ${
            sql.in([first.body.signal_id!, second.body.signal_id!])
          }`
      )
    )
    expect(logged.length).toBe(2)
  })
})
