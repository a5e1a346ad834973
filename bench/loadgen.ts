/**
 * The load generator: a process of its own (pinned to another core than the server when taskset
 * exists), so its CPU does not come out of the server's. It sends POSTs over loopback with
 * node:http and a keep-alive Agent (one socket per concurrent request): cheaper per request than
 * the global fetch (undici), which builds WHATWG Request/Response objects and streams for each
 * call, and the generator's own cost is what limits the `http_baseline` ceiling on a 2-core box.
 *
 * Input: the path of a JSON file (LoadSpec). Output on stdout: a line `measuring` when the
 * measured part starts (the harness samples the other processes' CPU there), then one JSON line
 * (LoadResult) as soon as it ends.
 */
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { encodeRequest } from "../src/http/engine/otlp-codec.ts"

export interface LoadSpec {
  readonly port: number
  readonly path: string
  readonly keys: ReadonlyArray<string>
  readonly durationS: number
  /** Closed loop: this many requests in flight, each sent when the previous one is answered. */
  readonly concurrency: number
  /** Open loop instead: this many requests per second, whatever the answers (concurrency caps in-flight). */
  readonly rate?: number
  /** An open loop's requests each over a connection of its own, as the adapters send (`--connection-per-request`). */
  readonly newConnections?: boolean
  /** Signals per request: 1 sends one signal; more sends `{signals: [...]}` to a batch endpoint. */
  readonly batch: number
  /** Every `probeEvery`-th request is sent by one of `probeKeys` with metadata.probe = its number (lag). */
  readonly probeKeys?: ReadonlyArray<string>
  readonly probeEvery?: number
  /** Send each key exactly once (memory scenario) instead of for a duration. */
  readonly oncePerKey?: boolean
  readonly warmupS?: number
  /**
   * Each request carries an Idempotency-Key of its own (a batch: each signal an idempotency_key),
   * as an adapter that retries safely sends them.
   */
  readonly idempotencyKeys?: boolean
  /** Every signal names an adapter of its own (a new session each: the flood scenario). */
  readonly distinctAdapters?: boolean
  /**
   * OTLP/HTTP instead (ingest_otlp): each request an ExportLogsServiceRequest in protobuf with
   * `batch` Claude Code api_request events, each a model request of its own.
   */
  readonly otlp?: boolean
}

export interface LoadResult {
  readonly requests: number
  readonly signals: number
  readonly seconds: number
  readonly errors: number
  /** The errors by kind: `status 503 log_unavailable` (the envelope's code), `socket ECONNRESET`. */
  readonly errorKinds: Record<string, number>
  readonly refused: number
  readonly pending: number
  /** Answers with `duplicate: true` (a retry of a keyed signal; none expected from unique keys). */
  readonly duplicates: number
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly p999: number; readonly max: number; readonly mean: number }
  readonly probes: number
  readonly dropped: number
  /**
   * An open loop's sends, how late the generator made them after they were due (its 1 ms timer
   * loop, its event loop busy with answers, its core shared): part of every latency counted.
   */
  readonly sendLateMs: { readonly p50: number; readonly p99: number; readonly max: number }
  /** Requests sent over a connection opened for them (the pool had no idle one, or none are kept). */
  readonly newConnections: number
  /** Of the answers at or over the p99, the share sent over a new connection (see bench/stages.ts). */
  readonly slowestOnNewConnections: number
  /** Answers that took longer than the adapters wait (3 s): to them, no answer. */
  readonly overAdapterTimeout: number
  readonly cpu: { readonly userMs: number; readonly systemMs: number; readonly percentOfOneCore: number }
}

const spec = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as LoadSpec
// An open loop with `newConnections` connects for every request, as the adapters do (`Connection: close`).
const agent = new Agent({
  keepAlive: !(spec.newConnections === true && spec.rate !== undefined),
  maxSockets: spec.concurrency,
  maxFreeSockets: spec.concurrency
})

const tools = ["Edit", "Read", "Bash", "Grep", "Write"]
const models = ["claude-sonnet-4-20250514", "gpt-4o", "claude-opus-4", "gemini-2.5-pro"]
let counter = 0
/** Unique per run, so keys of one run never repeat another's against the same database. */
const keyPrefix = `bench-${process.pid}-${Date.now().toString(36)}`

const signal = (n: number, probe?: number) => ({
  ...(spec.idempotencyKeys && spec.batch > 1 ? { idempotency_key: `${keyPrefix}-${n}` } : {}),
  type: n % 10 === 0 ? "user-prompt" : "post-tool",
  adapter: spec.distinctAdapters ? `flood-${keyPrefix}-${n}` : "claude-code",
  session_id: `bench-${n % 7}`,
  metadata: {
    model: models[n % models.length],
    tokens_in: 800 + (n % 400),
    tokens_out: 120 + (n % 80),
    latency_ms: 350 + (n % 900),
    project_id: `proj_${n % 5}`,
    tool: tools[n % tools.length],
    ...(probe === undefined ? {} : { probe })
  }
})

const attribute = (key: string, value: string | number) => ({ key, value: typeof value === "string" ? { stringValue: value } : { intValue: value } })

/** One model request as Claude Code's exporter reports it. */
const apiRequest = (n: number) => ({
  timeUnixNano: String(Date.now() * 1e6),
  body: { stringValue: "claude_code.api_request" },
  attributes: [
    attribute("session.id", `bench-${n % 7}`),
    attribute("event.name", "api_request"),
    attribute("event.sequence", n),
    attribute("model", models[n % models.length]!),
    attribute("input_tokens", 800 + (n % 400)),
    attribute("output_tokens", 120 + (n % 80)),
    attribute("cache_read_tokens", 4000),
    attribute("cache_creation_tokens", 200),
    attribute("duration_ms", 350 + (n % 900)),
    attribute("request_id", `req_${keyPrefix}_${n}`)
  ]
})

const otlpBody = (n: number): Uint8Array =>
  encodeRequest("logs", "protobuf", {
    resourceLogs: [{
      resource: { attributes: [attribute("service.name", "claude-code")] },
      scopeLogs: [{ logRecords: Array.from({ length: spec.batch }, (_, i) => apiRequest(n * spec.batch + i)) }]
    }]
  }) as Uint8Array

const bodyFor = (n: number, probe?: number): string | Uint8Array =>
  spec.otlp
    ? otlpBody(n)
    : spec.batch <= 1
    ? JSON.stringify(signal(n, probe))
    : JSON.stringify({ signals: Array.from({ length: spec.batch }, (_, i) => signal(n * spec.batch + i, i === 0 ? probe : undefined)) })

interface Answer {
  readonly status: number
  readonly body: string
  /** Sent over a connection opened for it. */
  readonly fresh: boolean
}

const post = (key: string, body: string | Uint8Array, idempotencyKey?: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({
      agent,
      host: "127.0.0.1",
      port: spec.port,
      method: "POST",
      path: spec.path,
      headers: {
        "content-type": spec.otlp ? "application/x-protobuf" : "application/json",
        "content-length": Buffer.byteLength(body),
        authorization: `Bearer ${key}`,
        ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
      }
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), fresh: !req.reusedSocket }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

const latencies: Array<number> = []
/** Of `latencies`, those of requests sent over a new connection. */
const freshLatencies: Array<number> = []
const lateness: Array<number> = []
let requests = 0
let signals = 0
let errors = 0
const errorKinds: Record<string, number> = {}
const countError = (kind: string) => {
  errors += 1
  errorKinds[kind] = (errorKinds[kind] ?? 0) + 1
}
let refused = 0
let pending = 0
let duplicates = 0
let probes = 0
let dropped = 0
let measuring = false

interface Outcome {
  ok: boolean
  action?: string
  duplicate?: boolean
}

const classify = (answer: Answer) => {
  if (answer.status < 200 || answer.status >= 300) {
    let code = ""
    try {
      code = String((JSON.parse(answer.body) as { code?: unknown }).code ?? "")
    } catch {
      // not an envelope
    }
    countError(`status ${answer.status}${code === "" ? "" : ` ${code}`}`)
    return
  }
  if (answer.status !== 200 || spec.otlp) return // the bare baseline server answers 202 with no verdict; OTLP answers none
  const parsed = JSON.parse(answer.body) as Outcome & { results?: ReadonlyArray<Outcome> }
  for (const r of parsed.results ?? [parsed]) {
    if (r.ok === false) refused += 1
    else if (r.action === "pending") pending += 1
    if (r.duplicate === true) duplicates += 1
  }
}

/** `dueAt`: an open loop's scheduled send time, from which its latency is counted (see openLoop). */
const one = async (n: number, key: string, probe?: number, dueAt?: number) => {
  const body = bodyFor(n, probe)
  const started = dueAt ?? performance.now()
  if (dueAt !== undefined && measuring) lateness.push(performance.now() - dueAt)
  try {
    const answer = await post(key, body, spec.idempotencyKeys && spec.batch <= 1 ? `${keyPrefix}-${n}` : undefined)
    if (!measuring) return
    latencies.push(performance.now() - started)
    if (answer.fresh) freshLatencies.push(performance.now() - started)
    requests += 1
    // Signals the service took: a refused request (429, 503) carried none it kept.
    if (answer.status >= 200 && answer.status < 300) signals += spec.batch
    classify(answer)
  } catch (error) {
    if (measuring) countError(`socket ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
}

const keyFor = (n: number) => spec.keys[n % spec.keys.length]!

const pick = (n: number): readonly [string, number | undefined] => {
  if (spec.probeKeys && spec.probeEvery && n % spec.probeEvery === 0) {
    probes += measuring ? 1 : 0
    return [spec.probeKeys[(n / spec.probeEvery) % spec.probeKeys.length]!, n]
  }
  return [keyFor(n), undefined]
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const closedLoop = async (until: number) => {
  await Promise.all(Array.from({ length: spec.concurrency }, async () => {
    while (performance.now() < until) {
      const n = counter++
      const [key, probe] = pick(n)
      await one(n, key, probe)
    }
  }))
}

/**
 * Sends at `rate` whatever the answers. Each request's latency counts from when it was due, not
 * from when this 1 ms timer loop got round to it: a generator that falls behind (its event loop
 * busy with answers) or a socket queue counts against the answer, as a client would see it, so
 * coordinated omission cannot hide queueing. Sends over the in-flight cap are not made at all:
 * `dropped` counts them, and a result with drops understates the tail.
 */
const openLoop = async (until: number, rate: number) => {
  const start = performance.now()
  let sent = 0
  let inFlight = 0
  const running = new Set<Promise<void>>()
  while (performance.now() < until) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate)
    while (sent < due) {
      sent += 1
      if (inFlight >= spec.concurrency) {
        if (measuring) dropped += 1
        continue
      }
      const n = counter++
      const [key, probe] = pick(n)
      inFlight += 1
      const p: Promise<void> = one(n, key, probe, start + (sent / rate) * 1000).finally(() => {
        inFlight -= 1
        running.delete(p)
      })
      running.add(p)
    }
    await new Promise((r) => setTimeout(r, 1))
  }
  await Promise.all(running)
}

const oncePerKey = async () => {
  let next = 0
  await Promise.all(Array.from({ length: spec.concurrency }, async () => {
    while (next < spec.keys.length) {
      const n = next++
      await one(n, spec.keys[n]!)
    }
  }))
}

const main = async () => {
  const warmupMs = (spec.warmupS ?? 0) * 1000
  if (warmupMs > 0 && !spec.oncePerKey) {
    const until = performance.now() + warmupMs
    if (spec.rate === undefined) await closedLoop(until)
    else await openLoop(until, spec.rate)
  }
  measuring = true
  process.stdout.write("measuring\n")
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  if (spec.oncePerKey) await oncePerKey()
  else if (spec.rate === undefined) await closedLoop(t0 + spec.durationS * 1000)
  else await openLoop(t0 + spec.durationS * 1000, spec.rate)
  const seconds = (performance.now() - t0) / 1000
  const cpu = process.cpuUsage(cpu0)
  const sorted = latencies.sort((a, b) => a - b)
  const late = lateness.sort((a, b) => a - b)
  const p99 = percentile(sorted, 99)
  const slowest = sorted.filter((ms) => ms >= p99).length
  const result: LoadResult = {
    requests,
    signals,
    seconds,
    errors,
    errorKinds,
    refused,
    pending,
    duplicates,
    latencyMs: {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      p999: percentile(sorted, 99.9),
      max: sorted[sorted.length - 1] ?? 0,
      mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)
    },
    probes,
    dropped,
    sendLateMs: { p50: percentile(late, 50), p99: percentile(late, 99), max: late[late.length - 1] ?? 0 },
    newConnections: freshLatencies.length,
    slowestOnNewConnections: slowest === 0 ? 0 : freshLatencies.filter((ms) => ms >= p99).length / slowest,
    overAdapterTimeout: sorted.filter((ms) => ms > 3_000).length,
    cpu: {
      userMs: cpu.user / 1000,
      systemMs: cpu.system / 1000,
      percentOfOneCore: ((cpu.user + cpu.system) / 1000 / (seconds * 1000)) * 100
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
  agent.destroy()
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
