import { connect, createServer } from "node:net"

/** A TCP port that was free a moment ago on loopback. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/** Whether a new connection to the loopback port is refused (nothing listens there any more). */
export const connectionRefused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1")
    socket.on("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.on("error", () => resolve(true))
  })
