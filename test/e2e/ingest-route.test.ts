import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"

/**
 * POST /engine/v1/signals is served directly by the gateway (src/http/engine/ingest-route.ts);
 * any other spelling of its path (here, another case) still reaches the HttpApi endpoint that
 * defines it. Every request below is sent both ways and must be answered the same.
 */
const direct = "/engine/v1/signals"
const throughApi = "/ENGINE/v1/signals"

const signal = (extra: Record<string, unknown> = {}) => ({
  type: "post-tool",
  adapter: "claude-code",
  session_id: "parity",
  metadata: { model: "claude-sonnet-4-20250514", tokens_in: 10, tokens_out: 5 },
  ...extra
})

/** What may differ between two answers to the same request: the ids minted for each. */
const comparable = (res: { status: number; headers: Headers; body: any }) => {
  const body = typeof res.body === "object" && res.body !== null ? { ...res.body } : res.body
  if (body?.signal_id !== undefined) body.signal_id = body.signal_id.replace(/^(sig_).*/, "$1…")
  if (body?.session_id !== undefined) body.session_id = body.session_id.replace(/^(sess_).*/, "$1…")
  if (body?.request_id !== undefined) {
    expect(body.request_id).toBe(res.headers.get("x-request-id"))
    body.request_id = "req_…"
  }
  return { status: res.status, contentType: res.headers.get("content-type"), allow: res.headers.get("allow"), body }
}

describe("POST /engine/v1/signals, served directly and through the HttpApi", () => {
  let server: TestServer
  let org: Bootstrapped
  let downgraded: Bootstrapped

  beforeAll(async () => {
    server = await startServer({})
    org = await bootstrapOrg(server.databaseUrl, "parity", "team")
    downgraded = await bootstrapOrg(server.databaseUrl, "parity-down", "team")
    await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE orgs SET plan = 'developer' WHERE id = ${downgraded.org_id}`
      })
    )
  })
  afterAll(() => server?.stop())

  type Options = Parameters<typeof call>[3]
  const both = async (options: () => Options) => {
    const a = await call(server, "POST", direct, options())
    const b = await call(server, "POST", throughApi, options())
    expect(comparable(a)).toEqual(comparable(b))
    return a
  }

  it("the other spelling is routed to the endpoint (so the comparisons below compare two ways)", async () => {
    const res = await call(server, "POST", throughApi, { key: org.license_key, body: signal() })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ ok: true })
  })

  interface Case {
    readonly name: string
    readonly options: () => Options
    readonly status: number
    readonly code?: string
  }
  const cases: ReadonlyArray<Case> = [
    { name: "a valid signal", options: () => ({ key: org.license_key, body: signal() }), status: 200 },
    { name: "no Authorization", options: () => ({ body: signal() }), status: 401, code: "missing_license_key" },
    { name: "a malformed key", options: () => ({ key: "lic_nope", body: signal() }), status: 401, code: "invalid_license_key" },
    {
      name: "a well-formed key that does not exist",
      options: () => ({ key: `lic_${"0".repeat(20)}`, body: signal() }),
      status: 401,
      code: "invalid_license_key"
    },
    {
      name: "a missing key and an invalid body: the key is checked first",
      options: () => ({ rawBody: "{", contentType: "application/json" }),
      status: 401,
      code: "missing_license_key"
    },
    {
      name: "the scheme in lower case and several spaces",
      options: () => ({ headers: { authorization: `bearer   ${org.license_key}` }, body: signal() }),
      status: 200
    },
    {
      name: "another scheme",
      options: () => ({ headers: { authorization: `Basic ${org.license_key}` }, body: signal() }),
      status: 401,
      code: "missing_license_key"
    },
    {
      name: "a live key of an org below the team plan",
      options: () => ({ key: downgraded.license_key, body: signal() }),
      status: 403,
      code: "plan_upgrade_required"
    },
    {
      name: "a content type that is not JSON",
      options: () => ({ key: org.license_key, rawBody: JSON.stringify(signal()), contentType: "text/plain" }),
      status: 415,
      code: "unsupported_media_type"
    },
    {
      name: "JSON with parameters",
      options: () => ({ key: org.license_key, rawBody: JSON.stringify(signal()), contentType: "Application/JSON; charset=utf-8" }),
      status: 200
    },
    {
      name: "a body that is not JSON",
      options: () => ({ key: org.license_key, rawBody: "{\"type\":", contentType: "application/json" }),
      status: 400,
      code: "invalid_json"
    },
    {
      name: "an empty body",
      options: () => ({ key: org.license_key, headers: { "content-type": "application/json" } }),
      status: 400,
      code: "invalid_parameters"
    },
    {
      name: "a missing field",
      options: () => ({ key: org.license_key, body: { type: "post-tool", session_id: "s" } }),
      status: 400,
      code: "invalid_parameters"
    },
    { name: "an array", options: () => ({ key: org.license_key, body: [signal()] }), status: 400, code: "invalid_parameters" },
    { name: "an unknown type", options: () => ({ key: org.license_key, body: signal({ type: "telepathy" }) }), status: 400, code: "invalid_signal_type" },
    {
      name: "negative tokens",
      options: () => ({ key: org.license_key, body: signal({ metadata: { tokens_in: -1 } }) }),
      status: 400,
      code: "invalid_parameters"
    },
    {
      name: "text PostgreSQL cannot store",
      options: () => ({ key: org.license_key, body: signal({ adapter: "a\u0000b" }) }),
      status: 400,
      code: "invalid_parameters"
    },
    {
      name: "metadata over the limit",
      options: () => ({ key: org.license_key, body: signal({ metadata: { prompt: "x".repeat(20_000) } }) }),
      status: 400,
      code: "metadata_too_large"
    },
    {
      name: "an Idempotency-Key header that is not one",
      options: () => ({ key: org.license_key, headers: { "idempotency-key": "has space" }, body: signal() }),
      status: 400,
      code: "invalid_parameters"
    },
    {
      name: "header and body keys that differ",
      options: () => ({ key: org.license_key, headers: { "idempotency-key": "k-1" }, body: signal({ idempotency_key: "k-2" }) }),
      status: 409,
      code: "conflicting_idempotency_keys"
    },
    {
      name: "a body that is not UTF-8",
      options: () => ({ key: org.license_key, rawBody: new Uint8Array([0x7b, 0xff, 0x7d]), contentType: "application/json" }),
      status: 400,
      code: "invalid_parameters"
    }
  ]

  it.each(cases)("$name", async ({ options, status, code }) => {
    const res = await both(options)
    expect(res.status).toBe(status)
    if (code !== undefined) expect(res.body.code).toBe(code)
  })

  it("a keyed signal sent again is answered as the first was, both ways", async () => {
    // Each way its own key; each sent twice: the second answer is the duplicate of the first.
    const first = await both(() => ({ key: org.license_key, headers: { "idempotency-key": `dup-${Math.random()}` }, body: signal() }))
    expect(first.body.duplicate).toBeUndefined()
    const key = `same-${Date.now()}`
    const a1 = await call(server, "POST", direct, { key: org.license_key, headers: { "idempotency-key": key }, body: signal() })
    const a2 = await call(server, "POST", direct, { key: org.license_key, headers: { "idempotency-key": key }, body: signal() })
    const b2 = await call(server, "POST", throughApi, { key: org.license_key, headers: { "idempotency-key": key }, body: signal() })
    expect(a2.body).toEqual({ ...a1.body, duplicate: true })
    expect(b2.body).toEqual({ ...a1.body, duplicate: true })
  })

  it("a signal answered ok directly is in its session", async () => {
    const res = await call(server, "POST", direct, { key: org.license_key, body: signal({ session_id: "found" }) })
    const one = await call(server, "GET", `/engine/v1/sessions/${res.body.session_id}`, { key: org.license_key })
    expect(one.body.signals.map((s: { id: string }) => s.id)).toContain(res.body.signal_id)
  })
})
