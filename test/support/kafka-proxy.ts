import { createServer, type Server, Socket } from "node:net"

/**
 * A TCP proxy in front of a Kafka broker (which advertises the proxy's port, so every client
 * connection goes through it), able to lose a produce request's answer the way a cut connection
 * does: the broker gets the request and writes its records, the client sees its connection closed.
 */
export interface KafkaProxy {
  readonly port: number
  /**
   * The next produce request reaches the broker, its answer does not: that connection closes, and
   * then every connection is refused for `refuseMs`. Resolves once the answer has been dropped.
   */
  readonly loseNextProduceAnswer: (refuseMs: number) => Promise<void>
  readonly close: () => Promise<void>
}

/** Produce's API key in the Kafka protocol: a request is a 4-byte size, then its API key (int16). */
const produceKey = 0

export const startKafkaProxy = (port: number, brokerPort: number): Promise<KafkaProxy> =>
  new Promise((resolve, reject) => {
    const open = new Set<Socket>()
    let refusingUntil = 0
    let arm: { readonly refuseMs: number; readonly dropped: () => void } | undefined
    const server: Server = createServer((client) => {
      if (Date.now() < refusingUntil) return void client.destroy()
      const broker = new Socket()
      broker.connect(brokerPort, "127.0.0.1")
      open.add(client)
      open.add(broker)
      let pending = Buffer.alloc(0)
      let dropNextAnswer: typeof arm
      const end = () => {
        client.destroy()
        broker.destroy()
        open.delete(client)
        open.delete(broker)
      }
      client.on("data", (chunk) => {
        broker.write(chunk)
        // Reads the requests' framing to find a produce request.
        pending = Buffer.concat([pending, chunk])
        while (pending.length >= 6 && pending.length >= 4 + pending.readInt32BE(0)) {
          if (arm !== undefined && pending.readInt16BE(4) === produceKey) {
            dropNextAnswer = arm
            arm = undefined
          }
          pending = pending.subarray(4 + pending.readInt32BE(0))
        }
      })
      broker.on("data", (chunk) => {
        if (dropNextAnswer === undefined) return void client.write(chunk)
        const dropped = dropNextAnswer
        refusingUntil = Date.now() + dropped.refuseMs
        for (const s of open) s.destroy()
        open.clear()
        end()
        dropped.dropped()
      })
      client.on("error", end)
      broker.on("error", end)
      client.on("close", end)
      broker.on("close", end)
    })
    server.on("error", reject)
    server.listen(port, "127.0.0.1", () =>
      resolve({
        port,
        loseNextProduceAnswer: (refuseMs) => new Promise((dropped) => void (arm = { refuseMs, dropped })),
        close: () =>
          new Promise((closed) => {
            for (const s of open) s.destroy()
            server.close(() => closed())
          })
      }))
  })
