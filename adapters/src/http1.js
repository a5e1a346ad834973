// @ts-check
import { builtin } from "./builtins.js"

/**
 * One HTTP/1.1 exchange on a connection of its own (`Connection: close`), over node:net or
 * node:tls. A hook makes one request per process, so it needs none of node:http's agents or
 * pooling, and loading node:http costs every hook ~10 internal modules on top of the socket's
 * (see docs/benchmarks.md, hook). Bodies may come with a Content-Length, chunked, or up to the close.
 */

/** @typedef {{ status: number, body: string } | { status: 0, reason: string }} Exchanged */

/**
 * Sends `payload` (already serialised) and resolves with the status and the body's text, or
 * status 0 and why there was none (a connection error's code, a timeout, a broken answer).
 * @returns {Promise<Exchanged>}
 */
export const exchange = (
  /** @type {URL} */ url,
  /** @type {string} */ method,
  /** @type {Record<string, string>} */ headers,
  /** @type {string | undefined} */ payload,
  /** @type {number} */ timeoutMs
) =>
  new Promise((resolve) => {
    const https = url.protocol === "https:"
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
    const port = Number(url.port || (https ? 443 : 80))
    const body = payload === undefined ? undefined : Buffer.from(payload, "utf8")
    const head = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, "connection: close"]
    for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`)
    if (body) head.push(`content-length: ${body.length}`)
    const request = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), ...(body ? [body] : [])])
    const socket = https
      ? builtin("node:tls").connect({ host, port, servername: builtin("node:net").isIP(host) ? undefined : host, ALPNProtocols: ["http/1.1"] })
      : builtin("node:net").connect({ host, port })
    let done = false
    const finish = (/** @type {Exchanged} */ value) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resolve(value)
    }
    const timer = setTimeout(() => finish({ status: 0, reason: `no answer within ${timeoutMs} ms` }), timeoutMs)
    /** @type {Buffer[]} */
    const chunks = []
    const parsed = () => parse(Buffer.concat(chunks))
    socket.on(https ? "secureConnect" : "connect", () => socket.write(request))
    socket.on("data", (/** @type {Buffer} */ c) => {
      chunks.push(c)
      const answer = parsed()
      if (answer?.complete) finish({ status: answer.status, body: answer.body })
    })
    socket.on("end", () => {
      const answer = parsed()
      finish(
        answer && (answer.complete || answer.untilClose)
          ? { status: answer.status, body: answer.body }
          : { status: 0, reason: "the connection closed before the answer" }
      )
    })
    socket.on("error", (/** @type {NodeJS.ErrnoException} */ e) => finish({ status: 0, reason: e.code ?? e.message }))
  })

/**
 * The answer in `buf` so far: undefined until its head is in; `complete` once the whole body is;
 * `untilClose` when only the connection's end delimits it.
 */
const parse = (/** @type {Buffer} */ buf) => {
  const end = buf.indexOf("\r\n\r\n")
  if (end < 0) return undefined
  const lines = buf.subarray(0, end).toString("latin1").split("\r\n")
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0)
  // An interim answer (100 Continue) is skipped: the final one follows it.
  if (status >= 100 && status < 200) return parse(buf.subarray(end + 4))
  /** @type {Record<string, string>} */
  const fields = {}
  for (const line of lines.slice(1)) {
    const i = line.indexOf(":")
    if (i > 0) fields[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  const rest = buf.subarray(end + 4)
  if (/\bchunked\b/i.test(fields["transfer-encoding"] ?? "")) return dechunk(status, rest)
  const length = fields["content-length"]
  if (length !== undefined) {
    const n = Number(length)
    return { status, complete: rest.length >= n, untilClose: false, body: rest.subarray(0, n).toString("utf8") }
  }
  return { status, complete: status === 204 || status === 304, untilClose: true, body: rest.toString("utf8") }
}

const dechunk = (/** @type {number} */ status, /** @type {Buffer} */ rest) => {
  /** @type {Buffer[]} */
  const parts = []
  let at = 0
  for (;;) {
    const eol = rest.indexOf("\r\n", at)
    if (eol < 0) break
    const size = parseInt(rest.subarray(at, eol).toString("latin1"), 16)
    if (!Number.isFinite(size)) break
    if (size === 0) return { status, complete: true, untilClose: false, body: Buffer.concat(parts).toString("utf8") }
    if (rest.length < eol + 2 + size + 2) break
    parts.push(rest.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return { status, complete: false, untilClose: false, body: "" }
}
