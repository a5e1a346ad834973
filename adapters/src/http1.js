// @ts-check
import { builtin } from "./builtins.js"

/**
 * One HTTP/1.1 exchange over node:net or node:tls. A hook makes one request per process, so it
 * needs none of node:http's agents, and loading node:http costs every hook ~10 internal modules
 * on top of the socket's (see docs/benchmarks.md, hook): a connection of its own, `Connection:
 * close`. The resident hook process (adapters/src/daemon.js) keeps its connections instead
 * (`keepConnections`): a new connection costs the service an accept and ~100–200 µs of CPU per
 * signal, and under load new connections wait for the accept (docs/benchmarks.md, "A verdict's
 * stages"). Bodies may come with a Content-Length, chunked, or up to the close.
 */

/** @typedef {{ status: number, body: string } | { status: 0, reason: string }} Exchanged */

/** An idle connection is closed after this long, or the server's `Keep-Alive: timeout` less a second if shorter. */
const IDLE_MS = 15_000

let keeping = false
/**
 * Idle connections by origin (protocol, host, port), each with what takes the pool's listeners
 * off it again (only ours: the socket's own, such as TLS's on close, stay).
 * @type {Map<string, Array<{ socket: import("node:net").Socket, unhook: () => void }>>}
 */
const idle = new Map()

/** Whether exchanges keep their connection for the next one (the resident process) or close it (a hook's own process). */
export const keepConnections = (/** @type {boolean} */ on) => {
  keeping = on
  if (!on) closeIdleConnections()
}

export const closeIdleConnections = () => {
  for (const sockets of idle.values()) for (const { socket } of sockets) socket.destroy()
  idle.clear()
}

/**
 * Sends `payload` (already serialised) and resolves with the status and the body's text, or
 * status 0 and why there was none (a connection error's code, a timeout, a broken answer). A
 * request lost on a kept connection before any of its answer came (the server closed it while
 * idle) is sent once more on a new one: every request the adapters make may be sent twice (GETs,
 * and signals under their idempotency keys).
 * @returns {Promise<Exchanged>}
 */
export const exchange = async (
  /** @type {URL} */ url,
  /** @type {string} */ method,
  /** @type {Record<string, string>} */ headers,
  /** @type {string | undefined} */ payload,
  /** @type {number} */ timeoutMs
) => {
  const https = url.protocol === "https:"
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  const port = Number(url.port || (https ? 443 : 80))
  const origin = `${url.protocol}//${host}:${port}`
  const body = payload === undefined ? undefined : Buffer.from(payload, "utf8")
  const head = [`${method} ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, ...(keeping ? [] : ["connection: close"])]
  for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`)
  if (body) head.push(`content-length: ${body.length}`)
  const request = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), ...(body ? [body] : [])])
  const started = Date.now()
  const kept = keeping ? takeIdle(origin) : undefined
  if (kept !== undefined) {
    const answer = await send(kept, undefined, request, origin, timeoutMs)
    if (!("lostUnanswered" in answer)) return answer
  }
  const socket = https
    ? builtin("node:tls").connect({ host, port, servername: builtin("node:net").isIP(host) ? undefined : host, ALPNProtocols: ["http/1.1"] })
    : builtin("node:net").connect({ host, port })
  const answer = await send(socket, https ? "secureConnect" : "connect", request, origin, Math.max(1, timeoutMs - (Date.now() - started)), timeoutMs)
  return "lostUnanswered" in answer ? { status: 0, reason: answer.reason } : answer
}

/** An idle connection to `origin` still open, taken out of the pool. */
const takeIdle = (/** @type {string} */ origin) => {
  const sockets = idle.get(origin)
  for (let entry = sockets?.pop(); entry !== undefined; entry = sockets?.pop()) {
    const { socket, unhook } = entry
    unhook()
    if (socket.destroyed || socket.readableEnded || !socket.writable) {
      socket.destroy()
      continue
    }
    socket.ref()
    return socket
  }
  return undefined
}

/** Puts a connection whose exchange is complete in the pool, closed after `idleMs` unused. */
const keepIdle = (/** @type {import("node:net").Socket} */ socket, /** @type {string} */ origin, /** @type {number} */ idleMs) => {
  const events = /** @type {const} */ (["error", "close", "end", "data"])
  const unhook = () => {
    for (const event of events) socket.off(event, drop)
    socket.setTimeout(0)
    socket.off("timeout", drop)
  }
  const entry = { socket, unhook }
  function drop() {
    unhook()
    socket.destroy()
    const sockets = idle.get(origin)
    const i = sockets?.indexOf(entry) ?? -1
    if (i >= 0) sockets?.splice(i, 1)
  }
  for (const event of events) socket.on(event, drop)
  socket.setTimeout(idleMs, drop)
  socket.unref()
  let sockets = idle.get(origin)
  if (sockets === undefined) idle.set(origin, sockets = [])
  sockets.push(entry)
}

/**
 * One request on `socket` (new: written on its `connected` event; kept: written now). A kept connection
 * that fails before any answer byte resolves `lostUnanswered`, for the caller to try a new one.
 * @returns {Promise<Exchanged | { lostUnanswered: true, reason: string }>}
 */
const send = (
  /** @type {import("node:net").Socket} */ socket,
  /** @type {"connect" | "secureConnect" | undefined} */ connected,
  /** @type {Buffer} */ request,
  /** @type {string} */ origin,
  /** @type {number} */ timeoutMs,
  // What the caller allowed in all (a retry on a new connection has what is left of it): the reason names it.
  budgetMs = timeoutMs
) =>
  new Promise((resolve) => {
    const fresh = connected !== undefined
    let done = false
    /** @type {Buffer[]} */
    const chunks = []
    const finish = (/** @type {Exchanged | { lostUnanswered: true, reason: string }} */ value, /** @type {number | undefined} */ keepFor = undefined) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose)
      if (keepFor === undefined) socket.destroy()
      else keepIdle(socket, origin, keepFor)
      resolve(value)
    }
    const lost = (/** @type {string} */ reason) => finish(!fresh && chunks.length === 0 ? { lostUnanswered: true, reason } : { status: 0, reason })
    const timer = setTimeout(() => finish({ status: 0, reason: `no answer within ${budgetMs} ms` }), timeoutMs)
    const parsed = () => parse(Buffer.concat(chunks))
    const onData = (/** @type {Buffer} */ c) => {
      chunks.push(c)
      const answer = parsed()
      if (answer?.complete) finish({ status: answer.status, body: answer.body }, keeping && answer.reusable ? answer.keepFor : undefined)
    }
    const onEnd = () => {
      const answer = parsed()
      if (answer && (answer.complete || answer.untilClose)) finish({ status: answer.status, body: answer.body })
      else lost("the connection closed before the answer")
    }
    const onError = (/** @type {NodeJS.ErrnoException} */ e) => lost(e.code ?? e.message)
    const onClose = () => lost("the connection closed before the answer")
    socket.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose)
    if (connected === undefined) socket.write(request)
    else socket.once(connected, () => socket.write(request))
  })

/**
 * The answer in `buf` so far: undefined until its head is in; `complete` once the whole body is;
 * `untilClose` when only the connection's end delimits it; `reusable` when the connection may
 * carry another exchange (framed, nothing after it, not closed by the server), for `keepFor` ms.
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
  const open = /^HTTP\/1\.1 /.test(lines[0] ?? "") && !/\bclose\b/i.test(fields.connection ?? "")
  const hinted = Number(/\btimeout=(\d+)/i.exec(fields["keep-alive"] ?? "")?.[1] ?? NaN)
  const keepFor = Number.isFinite(hinted) ? Math.max(0, Math.min(IDLE_MS, (hinted - 1) * 1000)) : IDLE_MS
  const rest = buf.subarray(end + 4)
  if (/\bchunked\b/i.test(fields["transfer-encoding"] ?? "")) {
    const answer = dechunk(status, rest)
    return { ...answer, reusable: open && answer.exact && keepFor > 0, keepFor }
  }
  const length = fields["content-length"]
  if (length !== undefined) {
    const n = Number(length)
    return {
      status,
      complete: rest.length >= n,
      untilClose: false,
      body: rest.subarray(0, n).toString("utf8"),
      reusable: open && rest.length === n && keepFor > 0,
      keepFor
    }
  }
  const empty = status === 204 || status === 304
  return { status, complete: empty, untilClose: true, body: rest.toString("utf8"), reusable: open && empty && rest.length === 0 && keepFor > 0, keepFor }
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
    if (size === 0) {
      // The last chunk, then trailers (none expected) and the final CRLF: nothing may follow it on a kept connection.
      const exact = rest.length === eol + 4 && rest.subarray(eol + 2, eol + 4).toString("latin1") === "\r\n"
      return { status, complete: true, untilClose: false, body: Buffer.concat(parts).toString("utf8"), exact }
    }
    if (rest.length < eol + 2 + size + 2) break
    parts.push(rest.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return { status, complete: false, untilClose: false, body: "", exact: false }
}
