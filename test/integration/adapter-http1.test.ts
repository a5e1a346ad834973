import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { createServer as createTcpServer } from "node:net"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { request } from "../../adapters/src/client.js"
import { keepConnections } from "../../adapters/src/http1.js"

/**
 * The adapter's own HTTP/1.1 exchange (adapters/src/http1.js) against real servers: whatever
 * framing a service or a proxy in front of it answers with, the hook reads the same answer.
 */
describe("the adapter's requests", () => {
  const servers: Array<{ close: () => void }> = []
  afterEach(() => {
    keepConnections(false)
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

  describe("kept connections (the resident hook process)", () => {
    /** A server counting the connections it accepted, answering `answer(n)` to its n-th request. */
    const counting = async (answer: (n: number, res: ServerResponse) => void) => {
      let requests = 0
      const server = createServer((req, res) => {
        req.resume()
        req.on("end", () => answer(++requests, res))
      })
      let connections = 0
      server.on("connection", () => connections++)
      servers.push({ close: () => server.close() })
      servers.push({ close: () => server.closeAllConnections() })
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, requests: () => requests }
    }

    it("sends request after request over one connection, and one each without them", async () => {
      const json = (n: number, res: ServerResponse) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ n }))
      keepConnections(true)
      const kept = await counting(json)
      for (let i = 1; i <= 3; i++) expect(await request(target(kept.url), "GET", "/me", undefined, 2000)).toEqual({ status: 200, body: { n: i } })
      expect(kept.connections()).toBe(1)
      // Chunked answers keep it too.
      const chunked = await counting((n, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.write("{\"n\":")
        res.end(`${n}}`)
      })
      for (let i = 1; i <= 2; i++) expect(await request(target(chunked.url), "GET", "/me", undefined, 2000)).toEqual({ status: 200, body: { n: i } })
      expect(chunked.connections()).toBe(1)

      keepConnections(false)
      const closed = await counting(json)
      for (let i = 1; i <= 2; i++) expect(await request(target(closed.url), "GET", "/me", undefined, 2000)).toEqual({ status: 200, body: { n: i } })
      expect(closed.connections()).toBe(2)
    })

    it("opens a new connection where the server closes its own (Connection: close)", async () => {
      keepConnections(true)
      const server = await counting((n, res) => res.writeHead(200, { connection: "close", "content-type": "application/json" }).end(JSON.stringify({ n })))
      for (let i = 1; i <= 2; i++) expect(await request(target(server.url), "GET", "/me", undefined, 2000)).toEqual({ status: 200, body: { n: i } })
      expect(server.connections()).toBe(2)
    })

    it("sends a request lost on a kept connection once more on a new one, and only then", async () => {
      keepConnections(true)
      // The second request arrives on a connection the server gives up without answering (as a
      // server closing an idle connection at that moment does); the third is answered.
      const sockets: Array<import("node:net").Socket> = []
      const server = createTcpServer((socket) => {
        sockets.push(socket)
        let seen = 0
        socket.on("data", () => {
          seen += 1
          if (sockets.length === 1 && seen === 2) return socket.destroy()
          const body = JSON.stringify({ connection: sockets.indexOf(socket) + 1, seen })
          socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
        })
      })
      servers.push({ close: () => server.close() }, { close: () => sockets.forEach((s) => s.destroy()) })
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      expect(await request(target(url), "POST", "/signals", { type: "stop" }, 2000, { "idempotency-key": "k1" })).toEqual({
        status: 200,
        body: { connection: 1, seen: 1 }
      })
      expect(await request(target(url), "POST", "/signals", { type: "stop" }, 2000, { "idempotency-key": "k2" })).toEqual({
        status: 200,
        body: { connection: 2, seen: 1 }
      })
      expect(sockets).toHaveLength(2)
      // A new connection that fails is not tried again: the answer says why.
      const silent = createTcpServer((socket) => socket.once("data", () => socket.destroy()))
      servers.push({ close: () => silent.close() })
      await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r))
      const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
      expect(await request(target(silentUrl), "GET", "/me", undefined, 2000)).toMatchObject({ status: 0 })
    })
  })
})
