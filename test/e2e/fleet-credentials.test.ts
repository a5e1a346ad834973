import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodeAnswer, encodeRequest } from "../../src/http/engine/otlp-codec.ts"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

/**
 * Fleet credentials: one org-level credential on every machine, each OTLP record and hook call
 * attributed to the user its identity names; unknown identities refused and counted, or created,
 * as the org says. The real Claude Code with the managed file: test/e2e/adapters/claude-code-http-hooks.test.ts.
 */
let server: TestServer
let org: Bootstrapped
let admin: string
beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, `fleet-${randomUUID().slice(0, 8)}`, "team")
  admin = org.api_key_live!
})
afterAll(() => server?.stop())

const attr = (key: string, value: string | number) => ({ key, value: typeof value === "string" ? { stringValue: value } : { intValue: value } })

let sequence = 0
const apiRequest = (session: string, email: string | undefined) => ({
  timeUnixNano: String(Date.now() * 1e6),
  body: { stringValue: "claude_code.api_request" },
  attributes: [
    attr("session.id", session),
    attr("event.name", "api_request"),
    attr("event.sequence", sequence++),
    ...(email === undefined ? [] : [attr("user.email", email)]),
    attr("model", "claude-sonnet-4-5"),
    attr("input_tokens", 1000),
    attr("output_tokens", 200),
    attr("request_id", `req_${randomUUID()}`)
  ]
})

/** One resourceLogs per entry: its resource attributes and its records. */
const logs = (...resources: ReadonlyArray<{ readonly resource?: Record<string, string>; readonly records: ReadonlyArray<unknown> }>) => ({
  resourceLogs: resources.map((r) => ({
    resource: { attributes: [attr("service.name", "claude-code"), ...Object.entries(r.resource ?? {}).map(([k, v]) => attr(k, v))] },
    scopeLogs: [{ scope: { name: "com.anthropic.claude_code.events" }, logRecords: r.records }]
  }))
})

const postLogs = async (key: string, request: Record<string, unknown>) => {
  const res = await fetch(`${server.baseUrl}/engine/v1/otlp/v1/logs`, {
    method: "POST",
    headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${key}` },
    body: encodeRequest("logs", "protobuf", request)
  })
  const raw = new Uint8Array(await res.arrayBuffer())
  return { status: res.status, answer: decodeAnswer(res.ok ? "logs" : "status", "protobuf", raw) as any }
}

/** One resourceMetrics of Claude Code's commit counter (delta), each point with its user.email if given. */
const commits = (points: ReadonlyArray<{ readonly email?: string; readonly value: number }>, resourceEmail?: string) => {
  const t = Date.now() - 60_000
  return {
    resourceMetrics: [{
      resource: { attributes: [attr("service.name", "claude-code"), ...(resourceEmail === undefined ? [] : [attr("user.email", resourceEmail)])] },
      scopeMetrics: [{
        scope: { name: "com.anthropic.claude_code" },
        metrics: [{
          name: "claude_code.commit.count",
          sum: {
            aggregationTemporality: 1,
            isMonotonic: true,
            dataPoints: points.map((p, i) => ({
              startTimeUnixNano: String(BigInt(t + i) * 1_000_000n),
              timeUnixNano: String(BigInt(t + i + 1_000) * 1_000_000n),
              asDouble: p.value,
              attributes: [attr("session.id", randomUUID()), ...(p.email === undefined ? [] : [attr("user.email", p.email)])]
            }))
          }
        }]
      }]
    }]
  }
}

const postMetrics = async (key: string, request: Record<string, unknown>) => {
  const res = await fetch(`${server.baseUrl}/engine/v1/otlp/v1/metrics`, {
    method: "POST",
    headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${key}` },
    body: encodeRequest("metrics", "protobuf", request)
  })
  const raw = new Uint8Array(await res.arrayBuffer())
  return { status: res.status, answer: decodeAnswer(res.ok ? "metrics" : "status", "protobuf", raw) as any }
}

const commitsOf = async (userId: string) => {
  const res = await call(server, "GET", `/api/v1/productivity?user_id=${userId}`, { key: admin })
  expect(res.status).toBe(200)
  return (res.body.data as Array<any>).find((g) => g.key === userId)?.commits ?? 0
}

const hook = (key: string, user: string | undefined, session: string) =>
  call(server, "POST", "/engine/v1/hooks/claude-code", {
    key,
    headers: user === undefined ? {} : { "x-signal-engine-user": user },
    body: { hook_event_name: "UserPromptSubmit", session_id: session, prompt: "hello", cwd: "/tmp", transcript_path: "/tmp/t.jsonl" }
  })

/** The user a session of this client session id was counted for, once it is there. */
const sessionUser = (clientSessionId: string) =>
  waitFor(async () => {
    const list = await call(server, "GET", "/api/v1/sessions?adapter=claude-code&limit=100", { key: admin })
    return (list.body.data as Array<any>).find((s) => s.client_session_id === clientSessionId)?.user_id as string | undefined
  }, (userId) =>
    userId !== undefined, { what: `the session ${clientSessionId}` })

const newFleetCredential = async () => {
  const created = await call(server, "POST", "/api/v1/fleet-credentials", { key: admin, body: { name: `fleet ${randomUUID()}` } })
  expect(created.status).toBe(201)
  return created.body
}
const user = async (email: string) => {
  const created = await call(server, "POST", "/api/v1/users", { key: admin, body: { email, name: email } })
  expect(created.status).toBe(201)
  return created.body.id as string
}
const usersByEmail = async () => {
  const list = await call(server, "GET", "/api/v1/users?limit=100", { key: admin })
  return new Map((list.body.data as Array<any>).map((u) => [u.email.toLowerCase(), u]))
}
const unknown = async () => (await call(server, "GET", "/api/v1/fleet/unknown-identities", { key: admin })).body.data as Array<any>
const setUnknownIdentities = async (value: "create" | "refuse") => {
  const patched = await call(server, "PATCH", "/api/v1/org", { key: admin, body: { unknown_identities: value } })
  expect(patched.status).toBe(200)
  expect(patched.body.unknown_identities).toBe(value)
}

describe("fleet credentials", () => {
  it("are created once with their value, listed by hint, and refused once revoked", async () => {
    const credential = await newFleetCredential()
    expect(credential.key).toMatch(/^flt_live_[0-9a-f]{32}$/)
    expect(credential.id).toMatch(/^fk_/)
    const list = await call(server, "GET", "/api/v1/fleet-credentials", { key: admin })
    const listed = (list.body.data as Array<any>).find((k) => k.id === credential.id)
    expect(listed).toMatchObject({ environment: "live", key_hint: `flt_live_…${credential.key.slice(-4)}`, revoked_at: null })
    expect(listed.key).toBeUndefined()
    const email = `rev-${randomUUID().slice(0, 8)}@example.com`
    await user(email)
    expect((await postLogs(credential.key, logs({ records: [apiRequest(randomUUID(), email)] }))).status).toBe(200)
    expect((await hook(credential.key, email, randomUUID())).status).toBe(200)

    expect((await call(server, "DELETE", `/api/v1/fleet-credentials/${credential.id}`, { key: admin })).status).toBe(204)
    const refused = await postLogs(credential.key, logs({ records: [apiRequest(randomUUID(), email)] }))
    expect(refused.status).toBe(401)
    expect(refused.answer.message).toContain("fleet credential")
    const hookRefused = await hook(credential.key, email, randomUUID())
    expect(hookRefused.status).toBe(401)
    expect(hookRefused.body.code).toBe("invalid_fleet_credential")
    expect((await call(server, "DELETE", `/api/v1/fleet-credentials/${org.user_id}`, { key: admin })).status).toBe(404)
  })

  it("attribute each record of a batch to its user; unknown ones are a partial success and counted", async () => {
    await setUnknownIdentities("refuse")
    const credential = await newFleetCredential()
    const alice = `alice-${randomUUID().slice(0, 8)}@example.com`
    const carol = `carol-${randomUUID().slice(0, 8)}@example.com`
    const stranger = `stranger-${randomUUID().slice(0, 8)}@example.com`
    const aliceId = await user(alice)
    const carolId = await user(carol)
    const [aliceSession, carolSession, strangerSession, anonymous] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    const sent = await postLogs(
      credential.key,
      logs(
        // The record's own user.email, in another letter case than the user's.
        { records: [apiRequest(aliceSession, alice.toUpperCase()), apiRequest(aliceSession, alice)] },
        // The resource's, as OTEL_RESOURCE_ATTRIBUTES sets it.
        { resource: { "user.email": carol }, records: [apiRequest(carolSession, undefined)] },
        { records: [apiRequest(strangerSession, stranger), apiRequest(strangerSession, stranger), apiRequest(anonymous, undefined)] }
      )
    )
    expect(sent.status).toBe(200)
    expect(Number(sent.answer.partialSuccess.rejectedLogRecords)).toBe(3)
    expect(sent.answer.partialSuccess.errorMessage).toContain(`${stranger} is no user of the org`)
    expect(sent.answer.partialSuccess.errorMessage).toContain("no user identity (user.email)")
    expect(await sessionUser(aliceSession)).toBe(aliceId)
    expect(await sessionUser(carolSession)).toBe(carolId)

    const counted = (await unknown()).find((u) => u.identity === stranger)
    expect(counted).toMatchObject({ count: 2, first_seen: expect.any(String), last_seen: expect.any(String) })
    expect((await usersByEmail()).has(stranger)).toBe(false)

    // The hook endpoint: identity from the header, refused as the same, counted in the same row.
    const hookRefused = await hook(credential.key, stranger, randomUUID())
    expect(hookRefused.status).toBe(403)
    expect(hookRefused.body.code).toBe("unknown_identity")
    expect((await unknown()).find((u) => u.identity === stranger)?.count).toBe(3)
    const noHeader = await hook(credential.key, undefined, randomUUID())
    expect(noHeader.status).toBe(403)
    const userName = await hook(credential.key, "jdoe", randomUUID())
    expect(userName.status).toBe(403)
    expect((await unknown()).some((u) => u.identity === "jdoe")).toBe(true)
    const hookSession = randomUUID()
    expect((await hook(credential.key, alice, hookSession)).status).toBe(200)
    expect(await sessionUser(hookSession)).toBe(aliceId)
  })

  it("attribute the tools' counters point by point; an unknown identity's points are rejected and counted", async () => {
    await setUnknownIdentities("refuse")
    const credential = await newFleetCredential()
    const alice = `alice-${randomUUID().slice(0, 8)}@example.com`
    const carol = `carol-${randomUUID().slice(0, 8)}@example.com`
    const stranger = `stranger-${randomUUID().slice(0, 8)}@example.com`
    const [aliceId, carolId] = [await user(alice), await user(carol)]
    // The point's own user.email over the resource's (carol's, as OTEL_RESOURCE_ATTRIBUTES sets it).
    const sent = await postMetrics(credential.key, commits([{ email: alice, value: 2 }, { value: 3 }, { email: stranger, value: 7 }], carol))
    expect(sent.status).toBe(200)
    expect(Number(sent.answer.partialSuccess.rejectedDataPoints)).toBe(1)
    expect(sent.answer.partialSuccess.errorMessage).toContain(`${stranger} is no user of the org`)
    expect([await commitsOf(aliceId), await commitsOf(carolId)]).toEqual([2, 3])
    expect((await unknown()).find((u) => u.identity === stranger)?.count).toBe(1)
  })

  it("create unknown identities as members when the org says so", async () => {
    const credential = await newFleetCredential()
    await setUnknownIdentities("create")
    try {
      const dave = `Dave-${randomUUID().slice(0, 8)}@example.com`
      const session = randomUUID()
      const sent = await postLogs(credential.key, logs({ records: [apiRequest(session, dave)] }))
      expect(sent.status).toBe(200)
      expect(Number(sent.answer.partialSuccess?.rejectedLogRecords ?? 0)).toBe(0)
      const created = (await usersByEmail()).get(dave.toLowerCase())
      expect(created).toMatchObject({ email: dave, role: "member", status: "active" })
      expect(await sessionUser(session)).toBe(created.id)

      const erin = `erin-${randomUUID().slice(0, 8)}@example.com`
      const hookSession = randomUUID()
      expect((await hook(credential.key, erin, hookSession)).status).toBe(200)
      const erinUser = (await usersByEmail()).get(erin)
      expect(await sessionUser(hookSession)).toBe(erinUser.id)
      // A deactivated user is not made again.
      expect((await call(server, "DELETE", `/api/v1/users/${erinUser.id}`, { key: admin })).status).toBe(204)
      expect((await hook(credential.key, erin, randomUUID())).status).toBe(403)
    } finally {
      await setUnknownIdentities("refuse")
    }
  })

  it("leave per-user license keys working on the same endpoints", async () => {
    const session = randomUUID()
    // A license key's records are its user's, whatever user.email they carry.
    const sent = await postLogs(org.license_key, logs({ records: [apiRequest(session, "someone-else@example.com")] }))
    expect(sent.status).toBe(200)
    expect(await sessionUser(session)).toBe(org.user_id)
    const hookSession = randomUUID()
    expect((await hook(org.license_key, "someone-else@example.com", hookSession)).status).toBe(200)
    expect(await sessionUser(hookSession)).toBe(org.user_id)
  })

  it("are of the environment of the key that made them, and so are their records", async () => {
    const created = await call(server, "POST", "/api/v1/fleet-credentials", { key: org.api_key_test, body: { name: "test machines" } })
    expect(created.status).toBe(201)
    expect(created.body.key).toMatch(/^flt_test_/)
    const liveList = await call(server, "GET", "/api/v1/fleet-credentials", { key: admin })
    expect((liveList.body.data as Array<any>).some((k) => k.id === created.body.id)).toBe(false)
    const session = randomUUID()
    expect((await hook(created.body.key, "admin@localhost", session)).status).toBe(200)
    const testSessions = await waitFor(
      async () => (await call(server, "GET", "/api/v1/sessions?adapter=claude-code&limit=100", { key: org.api_key_test })).body.data as Array<any>,
      (list) => list.some((s) => s.client_session_id === session),
      { what: "the test session" }
    )
    expect(testSessions.find((s) => s.client_session_id === session).user_id).toBe(org.user_id)
    const live = await call(server, "GET", "/api/v1/sessions?adapter=claude-code&limit=100", { key: admin })
    expect((live.body.data as Array<any>).some((s) => s.client_session_id === session)).toBe(false)
  })

  it("default to refuse, and PATCH /org refuses another value", async () => {
    const other = await bootstrapOrg(server.databaseUrl, `fleet-default-${randomUUID().slice(0, 8)}`, "team")
    const got = await call(server, "GET", "/api/v1/org", { key: other.api_key_live! })
    expect(got.body.unknown_identities).toBe("refuse")
    const bad = await call(server, "PATCH", "/api/v1/org", { key: other.api_key_live!, body: { unknown_identities: "maybe" } })
    expect(bad.status).toBe(400)
  })
})
