import { randomUUID } from "node:crypto"
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeAnswer, encodeRequest, type OtlpEncoding, type OtlpSignal } from "../../src/http/engine/otlp-codec.ts"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

/**
 * OTLP/HTTP on the engine surface, as an exporter speaks it: the answers (partial success, the
 * Status of a failure, in the request's encoding) and what of a batch ends up in the sessions.
 * The real Claude Code exporting to it: test/e2e/adapters/claude-code-otlp.test.ts.
 */
let server: TestServer
let org: Bootstrapped
beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "otlp", "team")
})
afterAll(() => server?.stop())

const model = "claude-sonnet-4-5"
const attr = (key: string, value: string | number | boolean) => ({
  key,
  value: typeof value === "string" ? { stringValue: value } : typeof value === "boolean" ? { boolValue: value } : { intValue: value }
})

/** A Claude Code log event as its exporter sends it (body, event attributes, session). */
let sequence = 0
const event = (session: string | undefined, name: string, attributes: Record<string, string | number | boolean>) => ({
  timeUnixNano: String(Date.now() * 1e6),
  body: { stringValue: `claude_code.${name}` },
  attributes: [
    attr("user.id", "4d69140d5c21cc64"),
    ...(session === undefined ? [] : [attr("session.id", session)]),
    attr("event.name", name),
    attr("event.sequence", sequence++),
    ...Object.entries(attributes).map(([k, v]) => attr(k, v))
  ]
})

const apiRequest = (session: string, requestId: string, tokens = { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 }) =>
  event(session, "api_request", {
    model,
    input_tokens: tokens.input,
    output_tokens: tokens.output,
    cache_read_tokens: tokens.cacheRead,
    cache_creation_tokens: tokens.cacheWrite,
    cost_usd: 99,
    duration_ms: 1500,
    request_id: requestId,
    "prompt.id": "p-1"
  })

const logsRequest = (records: ReadonlyArray<unknown>) => ({
  resourceLogs: [{
    resource: { attributes: [attr("service.name", "claude-code")] },
    scopeLogs: [{ scope: { name: "com.anthropic.claude_code.events" }, logRecords: records }]
  }]
})

const contentTypes: Record<OtlpEncoding, string> = { protobuf: "application/x-protobuf", json: "application/json" }

/** POSTs an OTLP request; answers the status, the headers and the body as its plain object. */
const post = async (
  signal: OtlpSignal,
  body: Uint8Array | string,
  options: { encoding?: OtlpEncoding; key?: string | null; contentType?: string; gzip?: boolean } = {}
) => {
  const encoding = options.encoding ?? "protobuf"
  const headers: Record<string, string> = { "content-type": options.contentType ?? contentTypes[encoding] }
  if (options.key !== null) headers.authorization = `Bearer ${options.key ?? org.license_key}`
  if (options.gzip) headers["content-encoding"] = "gzip"
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body
  const res = await fetch(`${server.baseUrl}/engine/v1/otlp/v1/${signal}`, {
    method: "POST",
    headers,
    body: options.gzip ? gzipSync(bytes) : bytes
  })
  const raw = new Uint8Array(await res.arrayBuffer())
  const answerEncoding: OtlpEncoding = (res.headers.get("content-type") ?? "").includes("json") ? "json" : "protobuf"
  const answer = decodeAnswer(res.ok ? signal : "status", answerEncoding, raw)
  return { status: res.status, headers: res.headers, answerEncoding, answer }
}

const sessionOf = async (clientSessionId: string) => {
  const list = await call(server, "GET", `/api/v1/sessions?adapter=claude-code&limit=100`, { key: org.api_key_live! })
  const found = (list.body.data as Array<any>).find((s) => s.client_session_id === clientSessionId || s.session_id === clientSessionId)
  if (found === undefined) return undefined
  return (await call(server, "GET", `/api/v1/sessions/${found.id}`, { key: org.api_key_live! })).body
}

/** What the service charges for one model call sent as a plain signal (its own price, not the tool's). */
const referenceCost = async (metadata: Record<string, unknown>) => {
  const adapter = `reference-${randomUUID().slice(0, 8)}`
  const sent = await call(server, "POST", "/engine/v1/signals", {
    key: org.license_key,
    body: { type: "token-milestone", adapter, session_id: adapter, metadata }
  })
  expect(sent.status).toBe(200)
  const list = await call(server, "GET", `/api/v1/sessions?adapter=${adapter}`, { key: org.api_key_live! })
  return list.body.data[0].cost_usd as number
}

describe("OTLP/HTTP log ingest", () => {
  it.each(["protobuf", "json"] as const)("turns Claude Code's events (%s) into the session's signals, and a resent batch counts once", async (encoding) => {
    const session = randomUUID()
    const request = logsRequest([
      event(session, "user_prompt", { "prompt.id": "p-1", prompt_length: "9", prompt: "<REDACTED>" }),
      apiRequest(session, `req_${randomUUID()}`),
      event(session, "tool_result", { tool_name: "Bash", tool_use_id: "toolu_1", success: "true", duration_ms: "45" }),
      apiRequest(session, `req_${randomUUID()}`),
      event(session, "plugin_loaded", { "plugin.name": "x" })
    ])
    const body = encodeRequest("logs", encoding, request)
    const first = await post("logs", body, { encoding })
    expect(first.status).toBe(200)
    expect(first.answerEncoding).toBe(encoding)
    expect(first.answer).toEqual({})
    const again = await post("logs", body, { encoding, gzip: true })
    expect(again.status).toBe(200)

    const found = await waitFor(() => sessionOf(session), (s) => s !== undefined, { what: "the OTLP session" })
    // One request's signals share their acceptance time, so their order in the session is not the batch's.
    expect(found.signals.map((s: any) => s.type).sort()).toEqual(["post-tool", "token-milestone", "token-milestone", "user-prompt"])
    expect(found.tokens_in).toBe(2 * (1200 + 5000 + 800))
    expect(found.tokens_out).toBe(2 * 300)
    // Priced by the service from the tokens, as a hook's usage is; the tool's own figure is kept aside.
    const one = await referenceCost({ model, tokens_in: 7000, tokens_out: 300, cache_read_tokens: 5000, cache_write_tokens: 800 })
    expect(found.cost_usd).toBeCloseTo(2 * one, 9)
    const usage = found.signals.find((s: any) => s.type === "token-milestone")
    expect(usage.metadata).toMatchObject({ model, latency_ms: 1500, reported_cost_usd: 99, source: "otel" })
    expect(found.signals.find((s: any) => s.type === "post-tool").metadata).toMatchObject({ tool_name: "Bash", duration_ms: 45 })
  })

  it("keeps the rest of a partly bad batch and reports the bad records as partial success", async () => {
    const session = randomUUID()
    const tooMany = { input: 2_000_000_000, output: 1, cacheRead: 0, cacheWrite: 0 }
    const res = await post(
      "logs",
      encodeRequest(
        "logs",
        "protobuf",
        logsRequest([
          apiRequest(session, "req_good"),
          event(undefined, "api_request", { model, input_tokens: 5, output_tokens: 5, request_id: "req_nosession" }),
          apiRequest(session, "req_huge", tooMany)
        ])
      )
    )
    expect(res.status).toBe(200)
    // int64 in the plain form: a decimal string.
    expect(res.answer.partialSuccess).toMatchObject({ rejectedLogRecords: "2" })
    expect(String((res.answer.partialSuccess as any).errorMessage)).toContain("without session.id")
    const found = await waitFor(() => sessionOf(session), (s) => s !== undefined, { what: "the partly bad batch's session" })
    expect(found.signals).toHaveLength(1)
    expect(found.tokens_in).toBe(7000)
  })

  it("refuses a truncated protobuf body with 400 and a Status, and keeps nothing of it", async () => {
    const session = randomUUID()
    const whole = encodeRequest("logs", "protobuf", logsRequest([apiRequest(session, "req_cut")])) as Uint8Array
    const res = await post("logs", whole.subarray(0, whole.length - 7))
    expect(res.status).toBe(400)
    expect(res.headers.get("content-type")).toBe("application/x-protobuf")
    expect(res.answer).toMatchObject({ code: 3 })
    expect(String(res.answer.message)).toContain("invalid OTLP logs request")
    // JSON that is not an ExportLogsServiceRequest: a Status in JSON.
    const json = await post("logs", JSON.stringify({ resourceLogs: 5 }), { encoding: "json" })
    expect(json.status).toBe(400)
    expect(json.answerEncoding).toBe("json")
    expect(json.answer).toMatchObject({ code: 3 })
    // The service holds nothing of the refused requests (read after them: reads wait for commits).
    expect(await sessionOf(session)).toBeUndefined()
  })

  it("answers 415 to a content type or encoding OTLP/HTTP does not define", async () => {
    const body = encodeRequest("logs", "json", logsRequest([]))
    const text = await post("logs", body, { contentType: "text/plain" })
    expect(text.status).toBe(415)
    expect(text.answer).toMatchObject({ code: 3 })
    const res = await fetch(`${server.baseUrl}/engine/v1/otlp/v1/logs`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.license_key}`, "content-type": "application/json", "content-encoding": "br" },
      body
    })
    expect(res.status).toBe(415)
  })

  it("answers 401 without a license key or with a wrong one, in the request's encoding", async () => {
    const body = encodeRequest("logs", "protobuf", logsRequest([]))
    const none = await post("logs", body, { key: null })
    expect(none.status).toBe(401)
    expect(none.answer).toMatchObject({ code: 16 })
    const wrong = await post("logs", body, { key: "lic_0000000000000000000000000000dead" })
    expect(wrong.status).toBe(401)
  })

  it("answers 413 to a body over the size limit, and to a gzip body that unpacks past it", async () => {
    const big = new Uint8Array(2 * 1024 * 1024)
    const over = await post("logs", big)
    expect(over.status).toBe(413)
    const bomb = await post("logs", new Uint8Array(40 * 1024 * 1024), { gzip: true })
    expect(bomb.status).toBe(413)
    expect(bomb.answer).toMatchObject({ code: 8 })
  })

  it("takes a large batch whole: more signals than one append holds", async () => {
    const session = randomUUID()
    const records = Array.from({ length: 700 }, (_, i) => apiRequest(session, `req_many_${i}`, { input: 10, output: 1, cacheRead: 0, cacheWrite: 0 }))
    const res = await post("logs", encodeRequest("logs", "protobuf", logsRequest(records)), { gzip: true })
    expect(res.status).toBe(200)
    expect(res.answer).toEqual({})
    const found = await waitFor(() => sessionOf(session), (s) => s?.signal_count === 700, { what: "the large batch's session" })
    expect(found.tokens_in).toBe(7000)
  })
})

describe("OTLP/HTTP metric ingest", () => {
  it("acknowledges metrics, known or not, and counts nothing from them", async () => {
    const session = randomUUID()
    const point = { asInt: 1200, timeUnixNano: String(Date.now() * 1e6), attributes: [attr("session.id", session), attr("type", "input")] }
    const request = {
      resourceMetrics: [{
        resource: { attributes: [attr("service.name", "claude-code")] },
        scopeMetrics: [{
          metrics: [
            { name: "claude_code.token.usage", sum: { dataPoints: [point], aggregationTemporality: 1, isMonotonic: true } },
            { name: "some.unknown.metric", gauge: { dataPoints: [{ asDouble: 1.5 }] } }
          ]
        }]
      }]
    }
    for (const encoding of ["protobuf", "json"] as const) {
      const res = await post("metrics", encodeRequest("metrics", encoding, request), { encoding })
      expect(res.status).toBe(200)
      expect(res.answer).toEqual({})
    }
    const cut = encodeRequest("metrics", "protobuf", request) as Uint8Array
    expect((await post("metrics", cut.subarray(0, cut.length - 3))).status).toBe(400)
    expect(await sessionOf(session)).toBeUndefined()
  })

  it("answers 405 to another method", async () => {
    const res = await call(server, "GET", "/engine/v1/otlp/v1/metrics", { key: org.license_key })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("POST")
  })
})
