import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

describe.each(logVariants())("idempotent ingestion over %s", (_name, logEnv) => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer({ env: logEnv() })
  })
  afterAll(() => server?.stop())

  const org = (name: string) => bootstrapOrg(server.databaseUrl, name, "team")
  const metadata = { model: "claude-sonnet-4", tokens_in: 1000, tokens_out: 100, cost_usd: 0.25 }
  const send = (o: Bootstrapped, key: string | undefined, body: Record<string, unknown> = {}) =>
    call(server, "POST", "/engine/v1/signals", {
      key: o.license_key,
      body: { type: "post-tool", adapter: "claude-code", session_id: "idem", metadata, ...body },
      ...(key === undefined ? {} : { headers: { "idempotency-key": key } })
    })
  const sessionOf = async (o: Bootstrapped, id: string) => (await call(server, "GET", `/engine/v1/sessions/${id}`, { key: o.license_key })).body
  const eventsOf = async (o: Bootstrapped, sessionId: string) =>
    (await call(server, "GET", `/api/v1/events?session_id=${sessionId}&limit=100`, { key: o.api_key_live! })).body.data as ReadonlyArray<any>

  it("a signal sent again with its Idempotency-Key is answered as the first was and counted once", async () => {
    const o = await org("idem-retry")
    const first = await send(o, "2f1c7e0a-retry-1")
    expect(first.status).toBe(200)
    expect(first.body.signal_id).toMatch(/^sig_[0-9a-f]{32}$/)
    expect(first.body.duplicate).toBeUndefined()
    const again = await send(o, "2f1c7e0a-retry-1")
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ok: true, signal_id: first.body.signal_id, session_id: first.body.session_id, duplicate: true })

    // A new key is a new signal; so is a signal without one.
    const other = await send(o, "2f1c7e0a-retry-2")
    expect(other.body.signal_id).not.toBe(first.body.signal_id)
    expect(other.body.duplicate).toBeUndefined()
    await send(o, undefined)

    const session = await sessionOf(o, first.body.session_id)
    expect(session.session).toMatchObject({ signals: 3, tokens_in: 3000, tokens_out: 300, cost_usd: 0.75 })
    expect(session.signals.map((s: { id: string }) => s.id)).toContain(first.body.signal_id)
    const events = await eventsOf(o, first.body.session_id)
    expect(events).toHaveLength(3)
    // The client can find the signal it was told about, under either answer's id.
    const event = await call(server, "GET", `/api/v1/events/${again.body.signal_id}`, { key: o.api_key_live! })
    expect(event.status).toBe(200)
    expect(event.body).toMatchObject({ session_id: first.body.session_id, tokens_in: 1000 })
  })

  it("keys are the user's own: another user's signal with the same key is counted", async () => {
    const a = await org("idem-a")
    const b = await org("idem-b")
    const fromA = await send(a, "shared-key")
    const fromB = await send(b, "shared-key")
    expect(fromB.body.duplicate).toBeUndefined()
    expect(fromB.body.signal_id).not.toBe(fromA.body.signal_id)
    expect((await sessionOf(b, fromB.body.session_id)).session.signals).toBe(1)
  })

  it("copies sent at the same time are one signal: exactly one is answered as the original, every other as a duplicate", async () => {
    const o = await org("idem-burst")
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(o, "burst-key")))
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
    const ids = new Set(answers.map((a) => a.body.signal_id))
    expect(ids.size).toBe(1)
    const sessionId = answers[0]!.body.session_id as string
    expect(answers.every((a) => a.body.session_id === sessionId && a.body.ok === true)).toBe(true)
    expect(answers.filter((a) => a.body.duplicate === undefined)).toHaveLength(1)
    expect(answers.filter((a) => a.body.duplicate === true)).toHaveLength(19)
    // Every copy went into the log; the worker counts the first only.
    const session = await sessionOf(o, sessionId)
    expect(session.session).toMatchObject({ signals: 1, tokens_in: 1000, cost_usd: 0.25 })
    expect(await eventsOf(o, sessionId)).toHaveLength(1)
  })

  it("a retry of a blocked signal is blocked again with the same rule and message, whatever the rules say now", async () => {
    const o = await org("idem-block")
    const rule = await call(server, "POST", "/api/v1/rules", {
      key: o.api_key_live!,
      body: {
        name: "No o3",
        type: "model_filter",
        scope: "org",
        scope_id: o.org_id,
        condition: { model: { in: ["o3"] } },
        action: "block",
        action_config: { message: "o3 is not allowed here" }
      }
    })
    expect(rule.status).toBeLessThan(300)
    // In force for the very next signal.
    expect((await send(o, undefined, { metadata: { model: "o3" } })).body.ok).toBe(false)
    const blocked = await send(o, "blocked-1", { metadata: { model: "o3", tokens_in: 5 } })
    expect(blocked.body).toMatchObject({ ok: false, action: "block", rule_id: rule.body.id, message: "o3 is not allowed here" })
    expect(blocked.body.duplicate).toBeUndefined()

    // The rule goes; new signals of the model pass, the retry is answered as its first copy was.
    expect((await call(server, "DELETE", `/api/v1/rules/${rule.body.id}`, { key: o.api_key_live! })).status).toBe(204)
    await waitFor(() => send(o, undefined, { metadata: { model: "o3" } }), (r) => r.body.ok === true, { what: "the rule gone" })
    const retry = await send(o, "blocked-1", { metadata: { model: "o3", tokens_in: 5 } })
    expect(retry.body).toEqual({ ...blocked.body, duplicate: true })
  })

  it("a batch carries a key per signal: repeats in it and in a resent batch are not counted again", async () => {
    const o = await org("idem-batch")
    const signal = (key?: string, tokens = 10) => ({
      type: "post-tool",
      adapter: "cursor",
      session_id: "idem-batch",
      metadata: { tokens_in: tokens },
      ...(key === undefined ? {} : { idempotency_key: key })
    })
    const batch = [signal("b-1", 1), signal("b-2", 2), signal("b-1", 1), signal(undefined, 4), signal("b-3", 8)]
    const sendBatch = () => call(server, "POST", "/engine/v1/signals/batch", { key: o.license_key, body: { signals: batch } })
    const first = (await sendBatch()).body.results as ReadonlyArray<any>
    expect(first.map((r) => r.ok)).toEqual([true, true, true, true, true])
    expect(first.map((r) => r.duplicate)).toEqual([undefined, undefined, true, undefined, undefined])
    expect(first[2].signal_id).toBe(first[0].signal_id)
    const sessionId = first[0].session_id as string
    expect((await sessionOf(o, sessionId)).session).toMatchObject({ signals: 4, tokens_in: 15 })

    const resent = (await sendBatch()).body.results as ReadonlyArray<any>
    expect(resent.map((r) => r.duplicate)).toEqual([true, true, true, undefined, true])
    expect(resent.map((r) => r.signal_id)).toEqual([first[0].signal_id, first[1].signal_id, first[0].signal_id, expect.any(String), first[4].signal_id])
    expect(resent[3].signal_id).not.toBe(first[3].signal_id)
    // Only the signal without a key counted again.
    expect((await sessionOf(o, sessionId)).session).toMatchObject({ signals: 5, tokens_in: 19 })
  })

  it("one-signal batches sent at the same time with one key: one original, the rest duplicates, one signal", async () => {
    const o = await org("idem-burst-batch")
    const answers = await Promise.all(Array.from({ length: 20 }, () =>
      call(server, "POST", "/engine/v1/signals/batch", {
        key: o.license_key,
        body: { signals: [{ type: "post-tool", adapter: "cursor", session_id: "burst", metadata, idempotency_key: "burst-batch" }] }
      })))
    const results = answers.map((a) => a.body.results[0])
    expect(new Set(results.map((r) => r.signal_id)).size).toBe(1)
    expect(results.filter((r) => r.ok === true && r.duplicate === undefined)).toHaveLength(1)
    expect(results.filter((r) => r.duplicate === true)).toHaveLength(19)
    expect((await sessionOf(o, results[0].session_id)).session).toMatchObject({ signals: 1, tokens_in: 1000 })
  })

  it("POST /signals also takes the key in the body; header and body must agree; a batch refuses the header", async () => {
    const o = await org("idem-body")
    const first = await send(o, undefined, { idempotency_key: "in-body" })
    expect(first.body.duplicate).toBeUndefined()
    // The same key by either route is the same signal.
    expect((await send(o, undefined, { idempotency_key: "in-body" })).body).toMatchObject({ signal_id: first.body.signal_id, duplicate: true })
    expect((await send(o, "in-body")).body).toMatchObject({ signal_id: first.body.signal_id, duplicate: true })
    expect((await send(o, "in-body", { idempotency_key: "in-body" })).body).toMatchObject({ signal_id: first.body.signal_id, duplicate: true })
    const differ = await send(o, "in-header", { idempotency_key: "in-body" })
    expect(differ.status).toBe(409)
    expect(differ.body).toMatchObject({ code: "conflicting_idempotency_keys", status: 409 })
    expect((await send(o, undefined, { idempotency_key: "" })).status).toBe(400)
    const batch = await call(server, "POST", "/engine/v1/signals/batch", {
      key: o.license_key,
      body: { signals: [{ type: "stop", adapter: "cursor", session_id: "idem" }] },
      headers: { "idempotency-key": "whole-batch" }
    })
    expect(batch.status).toBe(400)
    expect(batch.body).toMatchObject({ code: "invalid_parameters", status: 400, error: expect.stringContaining("idempotency_key") })
    expect((await sessionOf(o, first.body.session_id)).session).toMatchObject({ signals: 1 })
  })

  it("a key that is empty, too long or not visible ASCII is refused with the error envelope", async () => {
    const o = await org("idem-bad")
    for (const key of ["", "x".repeat(256), "has space", "ключ"]) {
      const res = await call(server, "POST", "/engine/v1/signals", {
        key: o.license_key,
        body: { type: "stop", adapter: "claude-code", session_id: "bad" },
        // As the bytes go on the wire (a header value is a byte string).
        headers: { "idempotency-key": Buffer.from(key).toString("latin1") }
      })
      expect(res.status, key).toBe(400)
      expect(res.body).toMatchObject({ code: "invalid_parameters", status: 400, request_id: expect.stringMatching(/^req_/) })
    }
    expect((await send(o, "x".repeat(255))).status).toBe(200)
    const batch = await call(server, "POST", "/engine/v1/signals/batch", {
      key: o.license_key,
      body: {
        signals: [
          { type: "stop", adapter: "cursor", session_id: "bad", idempotency_key: "" },
          { type: "stop", adapter: "cursor", session_id: "bad", idempotency_key: 42 },
          { type: "stop", adapter: "cursor", session_id: "bad", idempotency_key: "fine" }
        ]
      }
    })
    expect(batch.status).toBe(200)
    expect(batch.body.results.map((r: any) => r.ok ? "ok" : r.error.code)).toEqual(["invalid_parameters", "invalid_parameters", "ok"])
  })
})
