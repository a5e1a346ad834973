import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, startServer, type TestServer } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

/** Everything the server sends on a raw connection until it closes it (or `giveUpMs` passes). */
const untilClosed = (socket: Socket, giveUpMs: number) =>
  new Promise<{ readonly text: string; readonly closed: boolean }>((resolve) => {
    let text = ""
    const timer = setTimeout(() => resolve({ text, closed: false }), giveUpMs)
    socket.on("data", (chunk) => (text += chunk.toString()))
    socket.on("error", () => undefined)
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ text, closed: true })
    })
  })

const opened = (port: number) =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => resolve(socket))
    socket.once("error", reject)
  })

describe("connection limits", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ env: { LOG_PARTITIONS: "4", HTTP_REQUEST_TIMEOUT: "2 seconds", MAX_CONNECTIONS_PER_CLIENT: "4" } })
  })
  afterAll(() => server?.stop())

  it("a body that dribbles in is answered 408 and closed before it is whole", { timeout: 60_000 }, async () => {
    const org = await bootstrapOrg(server.databaseUrl, "slow-body", "team")
    const body = JSON.stringify({ type: "stop", adapter: "slow", session_id: "s1" })
    const socket = await opened(server.port)
    socket.write(
      `POST /engine/v1/signals HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${org.license_key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`
    )
    // One byte every 400 ms: the whole body would take longer than the 40 s given up at below.
    let sent = 0
    const drip = setInterval(() => {
      if (sent < body.length - 1 && !socket.destroyed) socket.write(body[sent++]!)
    }, 400)
    const answer = await untilClosed(socket, 40_000)
    clearInterval(drip)
    expect(answer.closed).toBe(true)
    expect(sent).toBeLessThan(body.length - 1)
    expect(answer.text).toMatch(/^HTTP\/1\.1 408 /)
    expect(JSON.parse(answer.text.slice(answer.text.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "request_timeout", status: 408 })
  })

  it("a client holding the most connections it may is answered 429 on the next one, and served again once it closes one", async () => {
    const held = await Promise.all(Array.from({ length: 4 }, () => opened(server.port)))
    try {
      const fifth = await opened(server.port)
      const refused = await untilClosed(fifth, 10_000)
      expect(refused.closed).toBe(true)
      expect(refused.text).toMatch(/^HTTP\/1\.1 429 /)
      expect(JSON.parse(refused.text.slice(refused.text.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "too_many_connections", status: 429 })
      // Each held connection still serves requests.
      const res = await new Promise<string>((resolve) => {
        let text = ""
        held[0]!.on("data", (c) => {
          text += c.toString()
          if (text.includes("\r\n\r\n")) resolve(text)
        })
        held[0]!.write("GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
      })
      expect(res).toMatch(/^HTTP\/1\.1 200 /)
      held.pop()!.destroy()
      // Served once the server has seen the close; until then a request is refused (429, or a reset
      // when the refusal arrives before the request is written).
      const served = await waitFor(
        () => fetch(`${server.baseUrl}/healthz`, { headers: { connection: "close" } }).then((r) => r.status, () => 0),
        (status) => status === 200,
        { timeoutMs: 10_000, what: "a connection to be served again" }
      )
      expect(served).toBe(200)
    } finally {
      for (const s of held) s.destroy()
    }
  })
})
