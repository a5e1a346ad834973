import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

interface Span {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: Record<string, string | number | boolean>
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean }

/**
 * An OTLP/HTTP collector as small as it gets: POST /v1/traces with a JSON body (the exporter is
 * told http/json), every span kept. What a user's collector would receive.
 */
const startCollector = async () => {
  const spans: Array<Span> = []
  const paths: Array<string> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      paths.push(`${req.method} ${req.url} ${req.headers["content-type"]}`)
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      for (const resource of body.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes: Record<string, string | number | boolean> = {}
            for (const { key, value } of span.attributes ?? [] as Array<{ key: string; value: AnyValue }>) {
              attributes[key] = value.stringValue ?? value.boolValue ?? Number(value.intValue ?? value.doubleValue)
            }
            attributes["service.name"] = resource.resource?.attributes?.find((a: { key: string }) => a.key === "service.name")?.value?.stringValue
            spans.push({ traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId || undefined, name: span.name, attributes })
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    paths,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe.each(logVariants())("OpenTelemetry traces (%s)", (_, variant) => {
  let server: TestServer
  let collector: Awaited<ReturnType<typeof startCollector>>
  let org: Bootstrapped

  beforeAll(async () => {
    collector = await startCollector()
    server = await startServer({
      env: {
        ...variant(),
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "50"
      }
    })
    org = await bootstrapOrg(server.databaseUrl, "traced", "team")
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
    await collector?.close()
  })

  const signal = (headers: Record<string, string> = {}) =>
    call(server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      headers,
      body: { type: "user-prompt", adapter: "claude-code", session_id: "cc-traced", metadata: { model: "claude-sonnet-4", tokens_in: 1, tokens_out: 1 } }
    })

  const spansOf = (traceId: string) => collector.spans.filter((s) => s.traceId === traceId)

  it("continues the caller's trace: the request's span is the child of its traceparent, the append its descendant", async () => {
    const traceId = randomBytes(16).toString("hex")
    const parentId = randomBytes(8).toString("hex")
    const answer = await signal({ traceparent: `00-${traceId}-${parentId}-01` })
    expect(answer.status).toBe(200)
    const trace = await waitFor(
      async () => spansOf(traceId),
      (spans) => spans.some((s) => s.name === "SignalLog.append") && spans.some((s) => s.parentSpanId === parentId),
      {
        what: "the request's spans at the collector"
      }
    )
    const request = trace.find((s) => s.parentSpanId === parentId)
    expect(request).toBeDefined()
    expect(request!.attributes).toMatchObject({ "http.request.method": "POST", "http.response.status_code": 200, "service.name": "signal-engine" })
    // The append descends from the request's span.
    const byId = new Map(trace.map((s) => [s.spanId, s]))
    const append = trace.find((s) => s.name === "SignalLog.append")!
    const ancestors: Array<string> = []
    for (let s: Span | undefined = append; s?.parentSpanId !== undefined; s = byId.get(s.parentSpanId)) ancestors.push(s.parentSpanId)
    expect(ancestors).toContain(request!.spanId)
    expect(ancestors[ancestors.length - 1]).toBe(parentId)
    expect(collector.paths).toContain("POST /v1/traces application/json")
  })

  it("exports a signal's request, its append, the batch that folds it and the commit that writes it", async () => {
    const traceId = randomBytes(16).toString("hex")
    expect((await signal({ traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` })).status).toBe(200)
    const append = (await waitFor(async () => spansOf(traceId).find((s) => s.name === "SignalLog.append"), (a) => a !== undefined, {
      what: "the append's span"
    }))!
    expect(append.attributes).toMatchObject({
      "signal_engine.records": 1,
      "signal_engine.partition": expect.any(Number),
      "signal_engine.offset": expect.any(Number)
    })
    const partition = append.attributes["signal_engine.partition"]
    const offset = Number(append.attributes["signal_engine.offset"])
    // The batch is a trace of its own (a batch folds many requests' records): found by where the record went.
    const folds = (b: Span) =>
      b.name === "PartitionWorker.batch" && b.attributes["signal_engine.partition"] === partition &&
      Number(b.attributes["signal_engine.first_offset"]) <= offset && offset <= Number(b.attributes["signal_engine.last_offset"])
    const children = await waitFor(
      async () => {
        const batch = collector.spans.find(folds)
        return batch === undefined ? [] : collector.spans.filter((s) => s.parentSpanId === batch.spanId).map((s) => s.name)
      },
      (names) => names.includes("PartitionWorker.fold"),
      { what: "the batch that folded the signal, with its fold" }
    )
    expect(children).toContain("PartitionWorker.fold")
    // The commit is written behind the verdict, a trace of its own too (it carries every batch
    // folded since the last): found by the offsets it wrote.
    const commits = (c: Span) =>
      c.name === "PartitionWorker.commit" && c.attributes["signal_engine.partition"] === partition &&
      Number(c.attributes["signal_engine.from_offset"]) <= offset && offset < Number(c.attributes["signal_engine.next_offset"])
    await waitFor(async () => collector.spans.find(commits), (c) => c !== undefined, { what: "the commit that wrote the signal" })
  })
})
