import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, type JsonResponse, startServer, type TestServer, withStore } from "../support/harness.ts"

/** Every non-2xx answer is the spec's envelope, with the request id also in X-Request-Id. */
const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status).toBe(status)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  expect(Object.keys(res.body).sort()).toEqual(["code", "error", "request_id", "status"])
  expect(res.body.status).toBe(status)
  expect(res.body.code).toBe(code)
  expect(typeof res.body.error).toBe("string")
  expect(res.body.error.length).toBeGreaterThan(0)
  expect(res.body.request_id).toMatch(/^req_[0-9a-f]{24}$/)
  expect(res.headers.get("x-request-id")).toBe(res.body.request_id)
}

let server: TestServer
let team: Bootstrapped
let lite: Bootstrapped

beforeAll(async () => {
  server = await startServer({ env: { MAX_BODY_BYTES: "4096" } })
  team = await bootstrapOrg(server.databaseUrl, "acme", "team")
  lite = await bootstrapOrg(server.databaseUrl, "tiny", "lite")
})
afterAll(() => server?.stop())

describe("401: missing or invalid credentials", () => {
  it("management without a key", async () => {
    expectEnvelope(await call(server, "GET", "/api/v1/org"), 401, "missing_api_key")
  })
  it("management with a malformed, unknown or wrong-surface key", async () => {
    for (const key of ["nope", "sek_test_" + "0".repeat(32), team.license_key, "sek_live_" + "g".repeat(32)]) {
      expectEnvelope(await call(server, "GET", "/api/v1/org", { key }), 401, "invalid_api_key")
    }
  })
  it("engine without a key", async () => {
    expectEnvelope(await call(server, "GET", "/engine/v1/me"), 401, "missing_license_key")
  })
  it("engine with a malformed, unknown or wrong-surface key", async () => {
    for (const key of ["lic_zz", "lic_" + "0".repeat(20), team.api_key_test]) {
      expectEnvelope(await call(server, "GET", "/engine/v1/me", { key }), 401, "invalid_license_key")
    }
  })
  it("a non-bearer Authorization header is no credential", async () => {
    const res = await fetch(`${server.baseUrl}/api/v1/org`, { headers: { authorization: `Basic ${team.api_key_test}` } })
    expect(res.status).toBe(401)
  })
})

describe("403: scope and plan", () => {
  it("a key without the endpoint's scope", async () => {
    const created = await call(server, "POST", "/api/v1/api-keys", {
      key: team.api_key_test,
      body: { name: "reader", scopes: ["rules:read"] }
    })
    expect(created.status).toBe(201)
    expectEnvelope(await call(server, "GET", "/api/v1/org", { key: created.body.key }), 403, "insufficient_scope")
  })
  it("write scope implies read, read does not imply write", async () => {
    const writer = await call(server, "POST", "/api/v1/api-keys", {
      key: team.api_key_test,
      body: { name: "admin writer", scopes: ["admin:write"] }
    })
    expect((await call(server, "GET", "/api/v1/org", { key: writer.body.key })).status).toBe(200)
    const reader = await call(server, "POST", "/api/v1/api-keys", {
      key: team.api_key_test,
      body: { name: "admin reader", scopes: ["admin:read"] }
    })
    expectEnvelope(
      await call(server, "POST", "/api/v1/projects", { key: reader.body.key, body: { name: "x" } }),
      403,
      "insufficient_scope"
    )
  })
  it("an engine feature outside the org's plan", async () => {
    // goal_drift is professional+; `me` itself is open to every plan and reports the features.
    const me = await call(server, "GET", "/engine/v1/me", { key: lite.license_key })
    expect(me.status).toBe(200)
    expect(me.body.features).toEqual(["signals", "sessions"])
  })
  it("a live key of an org that dropped below the team plan", async () => {
    const downgraded = await bootstrapOrg(server.databaseUrl, "shrinking", "team")
    await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE orgs SET plan = 'developer' WHERE id = ${downgraded.org_id}`
      })
    )
    expectEnvelope(await call(server, "GET", "/api/v1/org", { key: downgraded.api_key_live! }), 403, "plan_upgrade_required")
    expectEnvelope(await call(server, "GET", "/engine/v1/me", { key: downgraded.license_key }), 403, "plan_upgrade_required")
    expect((await call(server, "GET", "/api/v1/org", { key: downgraded.api_key_test })).status).toBe(200)
  })
})

describe("400, 404, 405, 409, 413, 415, 422", () => {
  it("400 for a body that is not JSON", async () => {
    expectEnvelope(await call(server, "POST", "/api/v1/projects", { key: team.api_key_test, rawBody: "{nope" }), 400, "invalid_json")
  })
  it("400 for a body of the wrong shape, naming the field", async () => {
    const res = await call(server, "POST", "/api/v1/users", { key: team.api_key_test, body: { email: 3, name: "x" } })
    expectEnvelope(res, 400, "invalid_parameters")
    expect(res.body.error).toContain("email")
  })
  it("400 for a query parameter out of range", async () => {
    for (const limit of ["0", "101", "abc", "1.5", "1e2", "0x10", "+5", "%205"]) {
      expectEnvelope(await call(server, "GET", `/api/v1/users?limit=${limit}`, { key: team.api_key_test }), 400, "invalid_parameters")
    }
  })
  it("400 for a cursor this service did not make, on every paged list; the empty cursor starts over", async () => {
    const forged = Buffer.from(JSON.stringify({ x: 1 })).toString("base64url")
    for (const list of ["users", "teams", "projects", "api-keys", "license-keys", "rules", "webhooks", "alerts", "sessions", "events"]) {
      for (const cursor of ["garbage", forged]) {
        const res = await call(server, "GET", `/api/v1/${list}?cursor=${cursor}`, { key: team.api_key_test })
        expectEnvelope(res, 400, "invalid_parameters")
      }
      expect((await call(server, "GET", `/api/v1/${list}?cursor=`, { key: team.api_key_test })).status, list).toBe(200)
    }
  })
  it("404 for an unknown route on either surface and outside them", async () => {
    for (const path of ["/api/v1/nope", "/engine/v1/nope", "/nope", "/api/v2/org"]) {
      expectEnvelope(await call(server, "GET", path, { key: team.api_key_test }), 404, "route_not_found")
    }
  })
  it("404 for an id of another org", async () => {
    const other = await bootstrapOrg(server.databaseUrl, "other", "team")
    expectEnvelope(await call(server, "GET", `/api/v1/users/${other.user_id}`, { key: team.api_key_test }), 404, "not_found")
  })
  it("405 with Allow for a known path and a wrong method", async () => {
    const res = await call(server, "PATCH", "/api/v1/users", { key: team.api_key_test, body: {} })
    expectEnvelope(res, 405, "method_not_allowed")
    expect(res.headers.get("allow")).toBe("GET, POST")
    const withParam = await call(server, "PUT", `/api/v1/api-keys/key_123`, { key: team.api_key_test, body: {} })
    expectEnvelope(withParam, 405, "method_not_allowed")
    expect(withParam.headers.get("allow")).toBe("DELETE")
  })
  it("400 for text that cannot be stored (U+0000, an unpaired surrogate) in a path, a query or a body; nothing is written", async () => {
    const key = team.api_key_test
    for (
      const path of [
        "/api/v1/users/%00",
        "/api/v1/sessions/a%00b/events",
        "/api/v1/events?model=%00",
        "/api/v1/sessions?user_id=x%00",
        "/api/v1/events?x%00=1"
      ]
    ) {
      const res = await call(server, "GET", path, { key })
      expectEnvelope(res, 400, "invalid_parameters")
      expect(res.body.error, path).toContain("cannot be stored")
    }
    for (const path of ["/engine/v1/sessions/%00", "/engine/v1/sessions?adapter=%00"]) {
      expectEnvelope(await call(server, "GET", path, { key: team.license_key }), 400, "invalid_parameters")
    }
    // Percent-encoding that is not UTF-8, or not percent-encoding at all.
    for (const path of ["/api/v1/users/%FF", "/api/v1/users/%ED%A0%80", "/api/v1/users/%"]) {
      const res = await call(server, "GET", path, { key })
      expectEnvelope(res, 400, "invalid_parameters")
      expect(res.body.error, path).toContain("percent-encoded")
    }
    for (const name of ["a\u0000b", "x\ud800", "\udfffy"]) {
      const res = await call(server, "POST", "/api/v1/projects", { key, body: { name } })
      expectEnvelope(res, 400, "invalid_parameters")
      expect(res.body.error).toContain("request body contains U+0000 or an unpaired UTF-16 surrogate")
    }
    // Nesting deep enough to exhaust a recursion is refused too, escapes or not.
    for (const escape of ["", "\\u0041"]) {
      const deep = `{"name":"deep${escape}","x":${"[".repeat(2_000)}${"]".repeat(2_000)}}`
      const res = await call(server, "POST", "/api/v1/projects", { key, rawBody: deep })
      expectEnvelope(res, 400, "invalid_parameters")
      expect(res.body.error).toContain("request body nests objects and arrays deeper than 64 levels")
    }
    const projects = await call(server, "GET", "/api/v1/projects?limit=100", { key })
    expect(projects.status).toBe(200)
    expect(projects.body.data.filter((p: { name: string }) => /[\u0000\ud800-\udfff]/.test(p.name))).toEqual([])
    // A surrogate pair is a character like any other, escaped or not.
    const paired = await call(server, "POST", "/api/v1/projects", { key, rawBody: JSON.stringify({ name: "emoji-" }).replace("-", "-\\ud83d\\ude00") })
    expect(paired.status).toBe(201)
    expect(paired.body.name).toBe("emoji-\u{1F600}")
  })
  it("404, not 405, for an id longer than the router takes on a path that has the method", async () => {
    expectEnvelope(await call(server, "GET", `/api/v1/users/usr_${"a".repeat(200)}`, { key: team.api_key_test }), 404, "not_found")
  })
  it("409 for a duplicate", async () => {
    const first = await call(server, "POST", "/api/v1/projects", { key: team.api_key_test, body: { name: "dup" } })
    expect(first.status).toBe(201)
    expectEnvelope(await call(server, "POST", "/api/v1/projects", { key: team.api_key_test, body: { name: "dup" } }), 409, "already_exists")
  })
  it("413 for a body over MAX_BODY_BYTES", async () => {
    const res = await call(server, "POST", "/api/v1/projects", {
      key: team.api_key_test,
      body: { name: "x".repeat(10_000) }
    })
    expectEnvelope(res, 413, "payload_too_large")
  })
  it("415 for a body that is not JSON by content type", async () => {
    const res = await call(server, "POST", "/api/v1/projects", {
      key: team.api_key_test,
      rawBody: "name=x",
      contentType: "text/plain"
    })
    expectEnvelope(res, 415, "unsupported_media_type")
  })
  it("415 for a compressed body (Content-Encoding), on both APIs; identity is no encoding", async () => {
    const body = JSON.stringify({ type: "stop", adapter: "coded", session_id: "c" })
    for (const coding of ["gzip", "br", "deflate"]) {
      const engine = await call(server, "POST", "/engine/v1/signals", { key: team.license_key, rawBody: body, headers: { "content-encoding": coding } })
      expectEnvelope(engine, 415, "unsupported_media_type")
      expect(engine.body.error).toContain(`Content-Encoding ${coding} is not supported`)
      const management = await call(server, "POST", "/api/v1/projects", {
        key: team.api_key_test,
        body: { name: `coded-${coding}` },
        headers: { "content-encoding": coding }
      })
      expectEnvelope(management, 415, "unsupported_media_type")
    }
    const events = await call(server, "GET", "/api/v1/events?adapter=coded", { key: team.api_key_test })
    expect(events.body.data).toEqual([])
    const plain = await call(server, "POST", "/engine/v1/signals", { key: team.license_key, rawBody: body, headers: { "content-encoding": "identity" } })
    expect(plain.status).toBe(200)
  })
  it("400 for a body that is not UTF-8, on both APIs, rather than storing U+FFFD", async () => {
    const bytes = (json: string) => {
      const b = Buffer.from(json, "latin1")
      return new Uint8Array(b.buffer, b.byteOffset, b.length)
    }
    const engine = await call(server, "POST", "/engine/v1/signals", {
      key: team.license_key,
      rawBody: bytes(`{"type":"stop","adapter":"r\xff\xfe","session_id":"x"}`)
    })
    expectEnvelope(engine, 400, "invalid_parameters")
    expect(engine.body.error).toContain("not valid UTF-8")
    const management = await call(server, "POST", "/api/v1/projects", { key: team.api_key_test, rawBody: bytes(`{"name":"caf\xe9"}`) })
    expectEnvelope(management, 400, "invalid_parameters")
    // The same text in UTF-8 is welcome.
    expect((await call(server, "POST", "/api/v1/projects", { key: team.api_key_test, body: { name: "café" } })).status).toBe(201)
  })
  it("422 for a reference to something that does not exist", async () => {
    const res = await call(server, "POST", "/api/v1/users", {
      key: team.api_key_test,
      body: { email: "new@acme.dev", name: "New", team_ids: ["team_does_not_exist"] }
    })
    expectEnvelope(res, 422, "unknown_reference")
  })
  it("keys are created in the environment of the key that creates them", async () => {
    const res = await call(server, "POST", "/api/v1/license-keys", { key: lite.api_key_test, body: { user_id: lite.user_id } })
    expect(res.status).toBe(201)
    expect(res.body.environment).toBe("test")
  })
})

/** Sends raw bytes on a new connection and answers what came back before the server closed it. */
const rawRequest = (request: string) =>
  new Promise<{ readonly status: number; readonly headers: string; readonly body: any }>((resolve, reject) => {
    const socket = connect(server.port, "127.0.0.1", () => socket.end(request))
    let received = ""
    socket.on("data", (chunk) => (received += chunk.toString()))
    socket.on("error", reject)
    socket.on("close", () => {
      const [head = "", body = ""] = received.split("\r\n\r\n", 2)
      resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body: body === "" ? undefined : JSON.parse(body) })
    })
  })

describe("requests Node cannot parse", () => {
  const expectRawEnvelope = (res: Awaited<ReturnType<typeof rawRequest>>, status: number, code: string) => {
    expect(res.status).toBe(status)
    expect(res.headers).toContain("content-type: application/json")
    expect(res.body).toEqual({ error: expect.any(String), code, status, request_id: expect.stringMatching(/^req_[0-9a-f]{24}$/) })
    expect(res.headers).toContain(`x-request-id: ${res.body.request_id}`)
  }
  it("an unknown method or a malformed request line is a 400 envelope", async () => {
    expectRawEnvelope(await rawRequest("FOO /api/v1/rules HTTP/1.1\r\nHost: x\r\n\r\n"), 400, "invalid_request")
    expectRawEnvelope(await rawRequest("this is not http\r\n\r\n"), 400, "invalid_request")
  })
  it("headers over Node's limit are a 431 envelope", async () => {
    const res = await rawRequest(`GET /api/v1/org HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${"a".repeat(20_000)}\r\n\r\n`)
    expectRawEnvelope(res, 431, "headers_too_large")
  })
})

describe("500", () => {
  it("a failure inside the service is an envelope that leaks nothing", async () => {
    const broken = await startServer()
    const org = await bootstrapOrg(broken.databaseUrl, "broken", "team")
    await withStore(
      broken.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`ALTER TABLE projects RENAME TO projects_gone`
      })
    )
    const res = await call(broken, "GET", "/api/v1/projects", { key: org.api_key_test })
    await broken.stop()
    expectEnvelope(res, 500, "internal_error")
    expect(res.body.error).toBe("internal server error")
    expect(JSON.stringify(res.body)).not.toMatch(/projects|sql|relation|stack/i)
  })
})

describe("request ids", () => {
  it("every response has a distinct X-Request-Id, success or not", async () => {
    const ids = new Set<string>()
    for (const path of ["/healthz", "/api/v1/org", "/engine/v1/me", "/nope"]) {
      const res = await call(server, "GET", path, { key: team.api_key_test })
      const id = res.headers.get("x-request-id")
      expect(id).toMatch(/^req_[0-9a-f]{24}$/)
      ids.add(id!)
    }
    expect(ids.size).toBe(4)
  })
})
