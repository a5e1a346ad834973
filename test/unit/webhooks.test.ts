import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHmac } from "node:crypto"
import type { SignalRecord } from "../../src/domain/records.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { emptyUserState } from "../../src/domain/user-state.ts"
import { retryDelayAfter } from "../../src/domain/delivery.ts"
import { toOutboxEvent, webhookEventId } from "../../src/domain/notices.ts"
import { makePartitionWorker } from "../../src/engine/partition-worker.ts"
import { parseKey } from "../../src/store/secret-box.ts"
import { sign } from "../../src/webhooks/signing.ts"
import { isPublicAddress, urlSyntaxProblem } from "../../src/webhooks/url-policy.ts"
import { memoryProjections } from "../support/memory-projections.ts"

describe("URL policy", () => {
  it.each([
    "10.1.1.1",
    "127.0.0.1",
    "127.255.0.9",
    "169.254.169.254",
    "100.64.1.1",
    "172.16.0.1",
    "192.168.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "fd00::1",
    "fc00::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:8.8.8.8",
    "64:ff9b::a00:1",
    "2002:a00:1::1",
    "not-an-ip",
    // IPv4-compatible (::/96): 127.0.0.1, 169.254.169.254, and a public IPv4 all the same
    "::127.0.0.1",
    "::7f00:1",
    "::a9fe:a9fe",
    "::808:808",
    // NAT64 local-use (64:ff9b:1::/48), Teredo (2001::/32), the rest of 2001::/23, documentation
    "64:ff9b:1::7f00:1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "2001:2::1",
    "2001:db8::1",
    "3fff::1",
    // site-local (deprecated, still routed inside some networks), discard, SRv6 SIDs, reserved
    "fec0::1",
    "100::1",
    "5f00::1",
    "4000::1",
    "::2"
  ])("refuses %s", (a) => expect(isPublicAddress(a)).toBe(false))

  it.each(["8.8.8.8", "1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "2a00:1450:4001:80b::200e", "2001:4860:4860::8888"])(
    "accepts %s",
    (a) => expect(isPublicAddress(a)).toBe(true)
  )

  it("wants https, except for allowed hosts, and no credentials", () => {
    const allowed = new Set(["127.0.0.1", "::1"])
    expect(urlSyntaxProblem("https://example.com/x", allowed)).toBeUndefined()
    expect(urlSyntaxProblem("http://example.com/x", allowed)).toBe(
      "url must use https (plain http is refused unless the service lists the host in WEBHOOK_ALLOWED_HOSTS)"
    )
    // Another scheme cannot be allowed: no hint.
    expect(urlSyntaxProblem("ftp://example.com/x", allowed)).toBe("url must use https")
    expect(urlSyntaxProblem("http://127.0.0.1:9/x", allowed)).toBeUndefined()
    expect(urlSyntaxProblem("http://[::1]:9/x", allowed)).toBeUndefined()
    expect(urlSyntaxProblem("https://a:b@example.com/", allowed)).toBe("url must not contain credentials")
    expect(urlSyntaxProblem("example.com", allowed)).toBe("url is not an absolute URL")
  })
})

describe("signing, ids, schedule, keys", () => {
  it("signs the exact body bytes with HMAC-SHA256", () => {
    const body = "{\"id\":\"wev_1\",\"type\":\"session.started\"}"
    expect(sign("k".repeat(32), body)).toBe(`sha256=${createHmac("sha256", "k".repeat(32)).update(body).digest("hex")}`)
    expect(sign("k".repeat(32), body)).not.toBe(sign("k".repeat(32), body + " "))
  })

  it("derives event ids from their cause", () => {
    expect(webhookEventId("session.started", "sess_1")).toMatch(/^wev_[0-9a-f]{32}$/)
    expect(webhookEventId("session.started", "sess_1")).toBe(webhookEventId("session.started", "sess_1"))
    expect(webhookEventId("session.ended", "sess_1")).not.toBe(webhookEventId("session.started", "sess_1"))
  })

  it("waits 30 s, 5 min, 30 min, 2 h between the five attempts (scaled), then gives up", () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayAfter(n, 1))).toEqual([30_000, 300_000, 1_800_000, 7_200_000, undefined])
    expect([1, 2, 3, 4].map((n) => retryDelayAfter(n, 0.001))).toEqual([30, 300, 1800, 7200])
  })

  it("takes a 32-byte key as hex or base64 only", () => {
    expect(parseKey("ab".repeat(32))?.length).toBe(32)
    expect(parseKey(Buffer.alloc(32, 7).toString("base64"))?.length).toBe(32)
    expect(parseKey("short")).toBeUndefined()
    expect(parseKey("ab".repeat(16))).toBeUndefined()
  })
})

describe("session notices", () => {
  const record = (over: Partial<SignalRecord>): SignalRecord => ({
    v: 1,
    kind: "signal",
    org_id: "org_1",
    environment: "live",
    user_id: "user_a",
    ts: "2026-03-01T09:00:00.000Z",
    signal_id: "sig_00000000000000000000000000000001",
    type: "post-tool",
    adapter: "claude-code",
    client_session_id: "cs-1",
    metadata: {},
    session_timeout_s: 1800,
    cost: { usd: 0.25, estimated: false, model_known: true },
    ...over
  })

  it("a session's first signal emits session.started, its end session.ended with the totals", () => {
    const a = fold(emptyUserState, record({ metadata: { model: "m", tokens_in: 5, tokens_out: 2 } }), { partition: 0, offset: 0 })
    expect(a.notices.map((n) => n.type)).toEqual(["session.started"])
    const b = fold(a.state, record({ signal_id: "sig_00000000000000000000000000000002", ts: "2026-03-01T09:00:10.000Z" }), { partition: 0, offset: 1 })
    expect(b.notices).toEqual([])
    const c = fold(b.state, record({ signal_id: "sig_00000000000000000000000000000003", ts: "2026-03-01T09:01:00.000Z", type: "session-end" }), {
      partition: 0,
      offset: 2
    })
    expect(c.notices).toEqual([{
      type: "session.ended",
      cause: a.sessionId,
      org_id: "org_1",
      environment: "live",
      ts: "2026-03-01T09:01:00.000Z",
      data: {
        session_id: a.sessionId,
        user_id: "user_a",
        adapter: "claude-code",
        client_session_id: "cs-1",
        project_id: null,
        started_at: "2026-03-01T09:00:00.000Z",
        ended_at: "2026-03-01T09:01:00.000Z",
        end_reason: "session-end",
        duration_s: 60,
        signal_count: 3,
        error_count: 0,
        model: "m",
        models: ["m"],
        tokens_in: 5,
        tokens_out: 2,
        cost_usd: 0.75
      }
    }])
    expect(toOutboxEvent(c.notices[0]!).payload).toEqual({
      id: webhookEventId("session.ended", a.sessionId!),
      type: "session.ended",
      org_id: "org_1",
      ts: "2026-03-01T09:01:00.000Z",
      data: c.notices[0]!.data
    })
  })

  it("activity after the timeout ends the old session and starts a new one", () => {
    const a = fold(emptyUserState, record({}), { partition: 0, offset: 0 })
    const b = fold(a.state, record({ signal_id: "sig_00000000000000000000000000000009", ts: "2026-03-01T10:00:00.000Z" }), { partition: 0, offset: 1 })
    expect(b.notices.map((n) => [n.type, n.cause])).toEqual([["session.ended", a.sessionId], ["session.started", b.sessionId]])
    expect(b.notices[0]!.data).toMatchObject({ end_reason: "timeout", ended_at: "2026-03-01T09:00:00.000Z" })
  })
})

describe("outbox from the partition worker", () => {
  const entries = [0, 1].map((offset) => ({
    partition: 0,
    offset,
    key: "user_a",
    record: {
      v: 1 as const,
      kind: "signal" as const,
      org_id: "org_1",
      environment: "live" as const,
      user_id: "user_a",
      ts: `2026-03-01T09:00:0${offset}.000Z`,
      signal_id: `sig_0000000000000000000000000000000${offset + 1}`,
      type: offset === 0 ? "session-start" as const : "session-end" as const,
      adapter: "claude-code",
      client_session_id: "cs",
      metadata: {},
      session_timeout_s: 1800,
      cost: { usd: 0, estimated: false, model_known: false }
    }
  }))

  it.effect("enqueues session events live, and nothing when replaying (notify: false)", () =>
    Effect.gen(function*() {
      const live = memoryProjections()
      yield* Effect.flatMap(makePartitionWorker({ log: "l", partition: 0, timers: false }), (w) => w.process(entries, 0)).pipe(Effect.provide(live.layer))
      expect([...live.notices.values()].map((n) => n.type)).toEqual(["session.started", "session.ended"])
      const replayed = memoryProjections()
      yield* Effect.flatMap(makePartitionWorker({ log: "l", partition: 0, timers: false, notify: false }), (w) => w.process(entries, 0)).pipe(
        Effect.provide(replayed.layer)
      )
      expect(replayed.sessions.size).toBe(1)
      expect(replayed.notices.size).toBe(0)
    }))
})
