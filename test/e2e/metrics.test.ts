import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { startReceiver } from "../support/receiver.ts"
import { waitFor } from "../support/wait.ts"

/** One scrape: every sample by `name{label="value",...}`, labels in name order. */
type Samples = ReadonlyMap<string, number>

const sampleKey = (name: string, labels: Record<string, string | number> = {}) => {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort()
  return pairs.length === 0 ? name : `${name}{${pairs.join(",")}}`
}

const parse = (text: string): Samples => {
  const samples = new Map<string, number>()
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`)
    const labels = Object.fromEntries([...(match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]))
    samples.set(sampleKey(match[1]!, labels), Number(match[3]))
  }
  return samples
}

const value = (samples: Samples, name: string, labels?: Record<string, string | number>) => samples.get(sampleKey(name, labels)) ?? 0

/** The sum of a metric's samples whose labels include `labels`. */
const total = (samples: Samples, name: string, labels: Record<string, string> = {}) => {
  let sum = 0
  for (const [key, v] of samples) {
    if (key !== name && !key.startsWith(`${name}{`)) continue
    if (Object.entries(labels).every(([k, l]) => key.includes(`${k}="${l}"`))) sum += v
  }
  return sum
}

describe.each(logVariants())("GET /metrics (%s)", (_, variant) => {
  let server: TestServer
  let metricsPort: number
  let env: Record<string, string>
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  let orgs = 0
  const newOrg = () => bootstrapOrg(server.databaseUrl, `metrics-${++orgs}`, "team")

  const scrape = async (): Promise<{ status: number; contentType: string | null; text: string; samples: Samples }> => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    const text = await response.text()
    return { status: response.status, contentType: response.headers.get("content-type"), text, samples: parse(text) }
  }

  const signal = (org: Bootstrapped, type: string, metadata: Record<string, unknown> = { model: "claude-sonnet-4", tokens_in: 10, tokens_out: 1 }) =>
    call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: { type, adapter: "claude-code", session_id: "cc-metrics", metadata } })

  beforeAll(async () => {
    metricsPort = await freePort()
    receiver = await startReceiver()
    env = variant()
    server = await startServer({
      env: {
        ...env,
        METRICS_PORT: String(metricsPort),
        // Key bursts of 10 signals: a batch of 11 is refused whole.
        ENGINE_RATE_LIMIT_SCALE: "0.01",
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        WEBHOOK_POLL_INTERVAL: "20 millis"
      }
    })
  }, 90_000)
  afterAll(async () => {
    await server?.stop()
    await receiver?.close()
  })

  it("is served on METRICS_PORT without credentials, in Prometheus' text format, and not on the API port", async () => {
    // Once the node has its partitions (the log assigns them after start-up).
    const scraped = await waitFor(scrape, (s) => value(s.samples, "signal_engine_partitions_owned") === 4, { what: "4 partitions owned" })
    expect(scraped.status).toBe(200)
    expect(scraped.contentType).toContain("text/plain")
    expect(scraped.text).toContain("# TYPE signal_engine_signals_accepted_total counter")
    expect(scraped.text).toContain("# TYPE signal_engine_verdict_latency_seconds histogram")
    // The process' own figures, as every Node exporter has them.
    expect(value(scraped.samples, "process_cpu_user_seconds_total")).toBeGreaterThan(0)
    expect(value(scraped.samples, "signal_engine_db_pool_max_connections")).toBe(20)
    expect(total(scraped.samples, "signal_engine_db_connections")).toBeGreaterThan(0)
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404)
    expect((await call(server, "GET", "/metrics")).status).toBe(404)
  })

  it("counts signals by type and action, their verdict latencies and appends, and requests by route template and status", async () => {
    const org = await newOrg()
    const rule = await call(server, "POST", "/api/v1/rules", {
      key: org.api_key_live!,
      body: {
        name: "no o3",
        type: "model_filter",
        scope: "org",
        scope_id: org.org_id,
        condition: { model: { in: ["o3"] } },
        action: "block",
        action_config: { message: "no o3" }
      }
    })
    expect(rule.body).toMatchObject({ id: expect.any(String) })
    const before = (await scrape()).samples
    for (let i = 0; i < 3; i++) expect((await signal(org, "user-prompt")).body).toMatchObject({ ok: true })
    for (let i = 0; i < 2; i++) expect((await signal(org, "pre-tool", { model: "o3" })).body).toMatchObject({ ok: false, action: "block" })
    expect((await call(server, "DELETE", "/api/v1/rules/rule_0123456789abcdef0123456789abcdef", { key: org.api_key_live! })).status).toBe(404)
    expect((await call(server, "GET", "/no/such/route")).status).toBe(404)
    const after = await scrape()
    const delta = (name: string, labels?: Record<string, string | number>) => value(after.samples, name, labels) - value(before, name, labels)

    expect(delta("signal_engine_signals_accepted_total", { type: "user-prompt", action: "allow" })).toBe(3)
    expect(delta("signal_engine_signals_accepted_total", { type: "pre-tool", action: "block" })).toBe(2)
    expect(delta("signal_engine_verdict_latency_seconds_count")).toBe(5)
    // One append per request (the engine's timers may add their own).
    const log = env.KAFKA_TOPIC === undefined ? "pg" : `kafka:${env.KAFKA_TOPIC}`
    expect(delta("signal_engine_log_append_duration_seconds_count", { log })).toBeGreaterThanOrEqual(5)
    expect(delta("signal_engine_log_append_errors_total", { log })).toBe(0)
    expect(
      total(after.samples, "signal_engine_partition_commit_duration_seconds_count") - total(before, "signal_engine_partition_commit_duration_seconds_count")
    )
      .toBeGreaterThanOrEqual(1)
    expect(total(after.samples, "signal_engine_actors_in_memory")).toBeGreaterThanOrEqual(1)
    expect(total(after.samples, "signal_engine_session_timers")).toBeGreaterThanOrEqual(1)

    expect(delta("signal_engine_http_requests_total", { method: "POST", route: "/engine/v1/signals", status: 200 })).toBe(5)
    expect(delta("signal_engine_http_requests_total", { method: "DELETE", route: "/api/v1/rules/:id", status: 404 })).toBe(1)
    expect(delta("signal_engine_http_requests_total", { method: "GET", route: "unmatched", status: 404 })).toBe(1)
    expect(delta("signal_engine_http_request_duration_seconds_count", { method: "POST", route: "/engine/v1/signals" })).toBe(5)
    // Templates, not paths: no id becomes a label.
    expect(after.text).not.toContain("rule_0123456789abcdef0123456789abcdef")
    expect(after.text).not.toContain("/no/such/route")
  })

  it("times each verdict's stages once per record, within the request's own duration", async () => {
    const org = await newOrg()
    const before = (await scrape()).samples
    for (let i = 0; i < 3; i++) expect((await signal(org, "user-prompt")).body).toMatchObject({ ok: true })
    const batch = await call(server, "POST", "/engine/v1/signals/batch", {
      key: org.license_key,
      body: { signals: [0, 1].map(() => ({ type: "post-tool", adapter: "claude-code", session_id: "cc-metrics", metadata: { tool_name: "Read" } })) }
    })
    expect(batch.body).toMatchObject({ results: [{ ok: true }, { ok: true }] })
    const after = (await scrape()).samples
    const stage = (stage: string, part: "count" | "sum") =>
      value(after, `signal_engine_verdict_stage_seconds_${part}`, { stage }) - value(before, `signal_engine_verdict_stage_seconds_${part}`, { stage })

    // Each of the five signals, on the request's path: read to append, the append, then its answer.
    for (const name of ["admit", "append", "answer"]) expect(stage(name, "count"), name).toBe(5)
    // In the partition's worker: these records, and any the engine appended meanwhile (its timers).
    for (const name of ["queue", "fold"]) expect(stage(name, "count"), name).toBeGreaterThanOrEqual(5)
    // The request-path stages do not overlap, so together they fit in the requests' durations.
    const requests = (route: string, part: "count" | "sum") =>
      value(after, `signal_engine_http_request_duration_seconds_${part}`, { method: "POST", route }) -
      value(before, `signal_engine_http_request_duration_seconds_${part}`, { method: "POST", route })
    expect(requests("/engine/v1/signals", "count") + requests("/engine/v1/signals/batch", "count")).toBe(4)
    const onPath = stage("admit", "sum") + stage("append", "sum") + stage("answer", "sum")
    expect(onPath).toBeGreaterThan(0)
    // The batch's two records each count its whole stages: at most twice its duration.
    expect(onPath).toBeLessThanOrEqual(requests("/engine/v1/signals", "sum") + 2 * requests("/engine/v1/signals/batch", "sum"))
  })

  it("counts rate-limit refusals: a batch over the key's burst is answered 429", async () => {
    const org = await newOrg()
    const before = (await scrape()).samples
    const signals = Array.from({ length: 11 }, () => ({ type: "user-prompt", adapter: "claude-code", session_id: "cc-burst", metadata: {} }))
    const refused = await call(server, "POST", "/engine/v1/signals/batch", { key: org.license_key, body: { signals } })
    expect(refused.status).toBe(429)
    const after = (await scrape()).samples
    expect(value(after, "signal_engine_rate_limited_total", { api: "engine" }) - value(before, "signal_engine_rate_limited_total", { api: "engine" })).toBe(1)
    expect(
      value(after, "signal_engine_http_requests_total", { method: "POST", route: "/engine/v1/signals/batch", status: 429 }) -
        value(before, "signal_engine_http_requests_total", { method: "POST", route: "/engine/v1/signals/batch", status: 429 })
    ).toBe(1)
  })

  it("counts webhook deliveries by outcome once the receiver has the event", async () => {
    const org = await newOrg()
    const before = (await scrape()).samples
    const hook = await call(server, "POST", "/api/v1/webhooks", {
      key: org.api_key_live!,
      body: { url: receiver.url, events: ["session.started"], secret: "metrics-secret-0123456789abcdefghijklmn" }
    })
    expect(hook.body).toMatchObject({ id: expect.any(String) })
    const received = receiver.received.length
    expect((await signal(org, "session-start")).status).toBe(200)
    await waitFor(async () => receiver.received.length, (n) => n > received, { what: "the webhook delivery" })
    const after = await waitFor(
      async () => (await scrape()).samples,
      (s) =>
        value(s, "signal_engine_webhook_deliveries_total", { outcome: "delivered" }) >
          value(before, "signal_engine_webhook_deliveries_total", { outcome: "delivered" }),
      { what: "the delivery to be counted" }
    )
    expect(
      value(after, "signal_engine_webhook_deliveries_total", { outcome: "delivered" }) -
        value(before, "signal_engine_webhook_deliveries_total", { outcome: "delivered" })
    )
      .toBe(1)
    expect(after.has("signal_engine_webhook_backlog")).toBe(true)
    expect(value(after, "signal_engine_webhooks_failing")).toBe(0)
  })
})
