import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createTcpServer } from "node:net"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { request } from "../../adapters/src/client.js"

/**
 * The adapter's own HTTP/1.1 exchange (adapters/src/http1.js) against real servers: whatever
 * framing a service or a proxy in front of it answers with, the hook reads the same answer.
 */
describe("the adapter's requests", () => {
  const servers: Array<{ close: () => void }> = []
  afterEach(() => {
    for (const s of servers.splice(0)) s.close()
  })

  const serve = async (handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<string> => {
    const server: Server = createServer((req, res) => {
      let body = ""
      req.on("data", (c) => (body += c))
      req.on("end", () => handler(req, body, res))
    })
    servers.push(server)
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }

  const target = (url: string) => ({ url, license_key: "lic_00000000000000000000" })

  it("sends the method, path, key, headers and JSON body, and reads a Content-Length answer", async () => {
    let seen: Record<string, unknown> = {}
    const url = await serve((req, body, res) => {
      seen = {
        method: req.method,
        url: req.url,
        auth: req.headers.authorization,
        key: req.headers["idempotency-key"],
        type: req.headers["content-type"],
        body: JSON.parse(body)
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, action: "allow", note: "é" }))
    })
    const answer = await request(target(url), "POST", "/signals", { type: "stop", note: "ü" }, 2000, { "idempotency-key": "k1" })
    expect(answer).toEqual({ status: 200, body: { ok: true, action: "allow", note: "é" } })
    expect(seen).toEqual({
      method: "POST",
      url: "/engine/v1/signals",
      auth: "Bearer lic_00000000000000000000",
      key: "k1",
      type: "application/json",
      body: { type: "stop", note: "ü" }
    })
  })

  it("reads a chunked answer, and an error status with its body", async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(503, { "content-type": "application/json" })
      res.write("{\"code\":\"log_unavail")
      setTimeout(() => res.end("able\",\"verdicts\":[]}"), 20)
    })
    expect(await request(target(url), "GET", "/me", undefined, 2000)).toEqual({ status: 503, body: { code: "log_unavailable", verdicts: [] } })
  })

  it("reads an answer delimited by the connection's close", async () => {
    const server = createTcpServer((socket) => {
      socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{\"user_id\":\"u1\"}"))
    })
    servers.push(server)
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    expect(await request(target(url), "GET", "/me", undefined, 2000)).toEqual({ status: 200, body: { user_id: "u1" } })
  })

  it("says why there was no answer: a refused connection, a timeout, a connection closed early, a URL not http(s)", async () => {
    const closed = await serve(() => {})
    servers.pop()!.close()
    expect(await request(target(closed), "GET", "/me", undefined, 2000)).toEqual({ status: 0, reason: "ECONNREFUSED" })

    const silent = await serve(() => {})
    expect(await request(target(silent), "GET", "/me", undefined, 200)).toEqual({ status: 0, reason: "no answer within 200 ms" })

    const server = createTcpServer((socket) => socket.once("data", () => socket.end("HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{")))
    servers.push(server)
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const early = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    expect(await request(target(early), "GET", "/me", undefined, 2000)).toEqual({ status: 0, reason: "the connection closed before the answer" })

    expect(await request(target("ftp://example.com"), "GET", "/me", undefined, 2000)).toEqual({
      status: 0,
      reason: "the service URL is not http(s): ftp://example.com"
    })
  })
})
