import { STATUS_CODES, type Server, type ServerOptions } from "node:http"
import type { Socket } from "node:net"
import { makeRequestId } from "../domain/ids.ts"

/**
 * Time limits of an API, not of a file server: Node's defaults let a request's body dribble in
 * for 300 s (and checked the deadline every 30 s), so a client that sends a byte now and then
 * holds a connection and its memory for minutes. A request must arrive whole within
 * `requestTimeout` (headers within `headersTimeout`), checked every second; a late one is
 * answered 408 (see answerClientErrors in server.ts) and closed.
 */
export const serverTimeouts = (o: { readonly requestTimeoutMs: number; readonly headersTimeoutMs: number }): ServerOptions => ({
  requestTimeout: o.requestTimeoutMs,
  // Node refuses a headers timeout above the request timeout.
  headersTimeout: Math.min(o.headersTimeoutMs, o.requestTimeoutMs),
  connectionsCheckingInterval: 1_000
})

/**
 * At most `max` open connections per client address: one client (or one address behind a NAT)
 * cannot take every socket and file descriptor of the node. A connection over the cap is closed
 * before anything of it is read, so nothing it carried was taken: over plain HTTP it is first
 * answered 429 `too_many_connections` (written at once, before the HTTP layer reads it); over TLS
 * there is no HTTP to answer in yet, and it is only closed.
 */
export const capConnectionsPerClient = <S extends Server>(server: S, max: number, tls: boolean): S => {
  const open = new Map<string, number>()
  // Before the HTTP layer's own listener, which would otherwise start reading the connection.
  server.prependListener("connection", (socket: Socket) => {
    const address = socket.remoteAddress ?? "unknown"
    const count = (open.get(address) ?? 0) + 1
    open.set(address, count)
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1
      if (left <= 0) open.delete(address)
      else open.set(address, left)
    })
    if (count <= max) return
    if (!tls) socket.write(tooMany(max))
    socket.destroy()
  })
  return server
}

const tooMany = (max: number) => {
  const requestId = makeRequestId()
  const body = JSON.stringify({
    error: `this address holds ${max} open connections, the most a client may; reuse them or close some`,
    code: "too_many_connections",
    status: 429,
    request_id: requestId
  })
  return `HTTP/1.1 429 ${STATUS_CODES[429]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    `retry-after: 1\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`
}
