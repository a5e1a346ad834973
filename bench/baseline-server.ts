/**
 * The ceiling: a bare node:http server that reads and JSON-parses the signal body and answers
 * 202, with nothing else (no routing, auth, validation, log or database). Port in argv[2].
 */
import { createServer } from "node:http"

const port = Number(process.argv[2])
const server = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    let ok = true
    try {
      JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      ok = false
    }
    const body = ok ? "{\"ok\":true}" : "{\"ok\":false}"
    res.writeHead(ok ? 202 : 400, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(port, "127.0.0.1", () => console.log(`listening on ${port}`))
