import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly n: number
  readonly path: string
  readonly body: string
  readonly headers: IncomingHttpHeaders
  readonly at: number
}

/** What the receiver does with its n-th request (1-based): the status, after an optional delay. */
export type Behaviour = (n: number) => { readonly status: number; readonly delayMs?: number }

/** A real webhook receiver on 127.0.0.1 that records every request and answers as told. */
export const startReceiver = async (behaviour: Behaviour = () => ({ status: 200 })) => {
  const received: Array<Received> = []
  let current = behaviour
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const n = received.length + 1
      received.push({ n, path: req.url ?? "", body: Buffer.concat(chunks).toString("utf8"), headers: req.headers, at: Date.now() })
      const { status, delayMs } = current(n)
      const answer = () => res.writeHead(status, { "content-type": "text/plain" }).end("ok")
      if (delayMs) setTimeout(answer, delayMs)
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** The parsed bodies, in arrival order. */
    events: () => received.map((r) => JSON.parse(r.body) as { id: string; type: string; org_id: string; ts: string; data: any }),
    behave: (b: Behaviour) => {
      current = b
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
