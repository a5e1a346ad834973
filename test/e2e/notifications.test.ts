import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { startReceiver } from "../support/receiver.ts"
import { startSmtpServer } from "../support/smtp.ts"
import { waitFor } from "../support/wait.ts"
import { chatText, expectChatFormat, firingsIn, notificationEnv } from "./notifications-helpers.ts"

let server: TestServer
let smtp: Awaited<ReturnType<typeof startSmtpServer>>
let orgs = 0

beforeAll(async () => {
  smtp = await startSmtpServer()
  server = await startServer({ env: notificationEnv(smtp.url) })
})
afterAll(async () => {
  await server?.stop()
  await smtp?.close()
})

interface Org extends Bootstrapped {
  readonly key: string
  readonly userLabel: string
}
const newOrg = async (): Promise<Org> => {
  const org = await bootstrapOrg(server.databaseUrl, `ntf-${++orgs}`, "team")
  const key = org.license_key_environment === "live" ? org.api_key_live! : org.api_key_test
  const user = (await call(server, "GET", `/api/v1/users/${org.user_id}`, { key })).body
  return { ...org, key, userLabel: `${user.name} <${user.email}>` }
}
const api = (org: Org, method: string, path: string, body?: unknown) =>
  call(server, method, `/api/v1${path}`, { key: org.key, ...(body === undefined ? {} : { body }) })
const channel = async (org: Org, body: Record<string, unknown>) => {
  const res = await api(org, "POST", "/channels", { name: `${body.kind} channel`, ...body })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body as { id: string; url: string | null }
}
const notifyRule = async (org: Org, model: string, channels: ReadonlyArray<string>) => {
  const res = await api(org, "POST", "/rules", {
    name: `watch ${model}`,
    type: "model_filter",
    scope: "org",
    scope_id: org.org_id,
    condition: { model: { in: [model] } },
    action: "notify",
    action_config: { channels }
  })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.id as string
}
const signal = (org: Org, model: string) =>
  call(server, "POST", "/engine/v1/signals", {
    key: org.license_key,
    body: { type: "post-tool", adapter: "claude-code", session_id: "n-1", metadata: { model, tokens_in: 10, tokens_out: 1 } }
  })
/** Waits out further dispatcher rounds, for tests that check nothing more is sent: no condition marks "never". */
const settle = (ms = 500) => new Promise((r) => setTimeout(r, ms))

describe("channels API", () => {
  it("creates, lists, gets, updates and deletes channels; a chat URL is a secret, shown redacted", async () => {
    const org = await newOrg()
    const secretPath = "/services/T000/B000/XXXXXXXXXXXXXXXX"
    const created = await channel(org, { kind: "slack", url: `http://127.0.0.1:9${secretPath}` })
    expect(created).toEqual({
      id: expect.stringMatching(/^ch_/),
      name: "slack channel",
      kind: "slack",
      url: "http://127.0.0.1:9/…",
      addresses: [],
      coalesce_seconds: 300,
      enabled: true,
      failing: false,
      created_at: expect.any(String),
      updated_at: null
    })
    const mail = await channel(org, { kind: "email", addresses: ["ops@example.com"], coalesce_seconds: 60 })
    const list = await api(org, "GET", "/channels")
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([mail.id, created.id])
    expect(JSON.stringify(list.body)).not.toContain("XXXXXXXX")
    expect((await api(org, "GET", `/channels/${created.id}`)).body).toEqual(created)
    const patched = await api(org, "PATCH", `/channels/${mail.id}`, { name: "On-call", addresses: ["a@example.com", "b@example.com"] })
    expect(patched.body).toMatchObject({ name: "On-call", addresses: ["a@example.com", "b@example.com"], updated_at: expect.any(String) })
    expect((await api(org, "PATCH", `/channels/${mail.id}`, { kind: "slack" })).status).toBe(400)
    expect((await api(org, "DELETE", `/channels/${mail.id}`)).status).toBe(204)
    expect((await api(org, "GET", `/channels/${mail.id}`)).status).toBe(404)
    // Another tenant sees none of it.
    const other = await newOrg()
    expect((await api(other, "GET", `/channels/${created.id}`)).status).toBe(404)
  })

  it("refuses bad channels with 422 and the envelope: the webhooks' SSRF policy guards chat URLs", async () => {
    const org = await newOrg()
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ kind: "slack" }, "validation_error"],
      [{ kind: "email", addresses: [] }, "validation_error"],
      [{ kind: "email", addresses: ["not-an-address"] }, "validation_error"],
      [{ kind: "discord", url: "https://8.8.8.8/x", coalesce_seconds: 0 }, "validation_error"],
      [{ kind: "slack", url: "http://example.com/hook" }, "url_not_allowed"],
      [{ kind: "slack", url: "https://localhost/hook" }, "url_not_allowed"],
      [{ kind: "teams", url: "https://127.0.0.2/hook" }, "url_not_allowed"],
      [{ kind: "discord", url: "https://10.1.2.3/hook" }, "url_not_allowed"],
      [{ kind: "slack", url: "https://169.254.169.254/latest/meta-data" }, "url_not_allowed"],
      [{ kind: "slack", url: "https://[::1]/hook" }, "url_not_allowed"]
    ]
    for (const [body, code] of cases) {
      const res = await api(org, "POST", "/channels", { name: "x", ...body })
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(res.body).toMatchObject({ code, status: 422, request_id: expect.stringMatching(/^req_/) })
    }
  })

  it("a notify rule names channels of its tenant (422 otherwise); a channel in use cannot be deleted (409)", async () => {
    const org = await newOrg()
    const other = await newOrg()
    const foreign = await channel(other, { kind: "discord", url: "https://8.8.8.8/x" })
    const mine = await channel(org, { kind: "discord", url: "https://8.8.8.8/y" })
    const rule = (action: string, channels: unknown) =>
      api(org, "POST", "/rules", {
        name: "r",
        type: "model_filter",
        scope: "org",
        scope_id: org.org_id,
        condition: { model: { in: ["m"] } },
        action,
        action_config: { channels, ...(action === "block" ? { message: "no" } : {}) }
      })
    for (const [action, channels] of [["notify", [foreign.id]], ["notify", ["ch_nope"]], ["notify", "ch_x"], ["block", [mine.id]]] as const) {
      const res = await rule(action, channels)
      expect(res.status, JSON.stringify(channels)).toBe(422)
      expect(res.body).toMatchObject({ code: "validation_error", status: 422, error: expect.stringContaining("action_config.channels") })
    }
    const ok = await rule("notify", [mine.id])
    expect(ok.status).toBe(201)
    const del = await api(org, "DELETE", `/channels/${mine.id}`)
    expect(del.status).toBe(409)
    expect(del.body).toMatchObject({ code: "channel_in_use", error: expect.stringContaining(ok.body.id) })
  })

  it("org alert_channels: set with PATCH /org, shown on the org, unknown ids are 422", async () => {
    const org = await newOrg()
    expect((await api(org, "GET", "/org")).body.alert_channels).toEqual([])
    const ch = await channel(org, { kind: "teams", url: "https://8.8.8.8/t" })
    const bad = await api(org, "PATCH", "/org", { alert_channels: [ch.id, "ch_missing"] })
    expect(bad.status).toBe(422)
    expect(bad.body).toMatchObject({ code: "validation_error", error: expect.stringContaining("ch_missing") })
    const set = await api(org, "PATCH", "/org", { alert_channels: [ch.id] })
    expect(set.status).toBe(200)
    expect(set.body.alert_channels).toEqual([ch.id])
    expect((await api(org, "PATCH", "/org", { time_zone: "Europe/Berlin" })).body.alert_channels).toEqual([ch.id])
  })
})

describe("notification delivery", () => {
  it("POST /channels/:id/test sends each chat format and an e-mail", async () => {
    const receiver = await startReceiver()
    try {
      const org = await newOrg()
      for (const kind of ["slack", "teams", "discord"] as const) {
        const ch = await channel(org, { kind, url: receiver.url, name: `Team ${kind}` })
        const res = await api(org, "POST", `/channels/${ch.id}/test`)
        expect(res.body).toMatchObject({ delivered: true, status_code: 200, error: null })
        const body = JSON.parse(receiver.received.at(-1)!.body)
        expectChatFormat(kind, body)
        expect(chatText(kind, body)).toContain(`Team ${kind}`)
      }
      const mail = await channel(org, { kind: "email", addresses: ["test-me@example.com"] })
      expect((await api(org, "POST", `/channels/${mail.id}/test`)).body).toMatchObject({ delivered: true, error: null })
      const got = smtp.received.find((m) => m.to.includes("test-me@example.com"))!
      expect(got.subject).toBe("Test message from signal-engine")
      expect(got.from).toBe("alerts@signals.example.com")
    } finally {
      await receiver.close()
    }
  })

  it("a notify rule firing sends one chat message and one e-mail, in words", async () => {
    const receiver = await startReceiver()
    try {
      const org = await newOrg()
      const chat = await channel(org, { kind: "slack", url: receiver.url })
      const mail = await channel(org, { kind: "email", addresses: ["lead@example.com"] })
      const rule = await notifyRule(org, "gpt-risky", [chat.id, mail.id])
      const res = await signal(org, "gpt-risky")
      expect(res.body).toMatchObject({ ok: true, action: "notify", rule_id: rule })
      await waitFor(async () => receiver.received.length + smtp.received.filter((m) => m.to.includes("lead@example.com")).length, (n) => n >= 2)
      await settle()
      expect(receiver.received).toHaveLength(1)
      const body = JSON.parse(receiver.received[0]!.body)
      expectChatFormat("slack", body)
      const text = chatText("slack", body)
      for (const words of ["Rule “watch gpt-risky” fired for", org.userLabel.replace("<", "&lt;").replace(">", "&gt;"), "Model: gpt-risky", "Action: notify"]) {
        expect(text).toContain(words)
      }
      expect(text).toContain(`https://signals.example.com/#/sessions/${res.body.session_id}`)
      const mails = smtp.received.filter((m) => m.to.includes("lead@example.com"))
      expect(mails).toHaveLength(1)
      expect(mails[0]!.subject).toBe(`Rule “watch gpt-risky” fired for ${org.userLabel}`)
      expect(mails[0]!.text).toContain("Model: gpt-risky")
      expect(mails[0]!.text).toContain(`https://signals.example.com/#/sessions/${res.body.session_id}`)
    } finally {
      await receiver.close()
    }
  })

  it("a rule firing 1,000 times in a minute sends a bounded number of messages that count every firing", async () => {
    const receiver = await startReceiver()
    try {
      const org = await newOrg()
      const chat = await channel(org, { kind: "discord", url: receiver.url, coalesce_seconds: 2 })
      await notifyRule(org, "hot-model", [chat.id])
      const started = Date.now()
      for (let b = 0; b < 2; b++) {
        const signals = Array.from({ length: 500 }, () => ({
          type: "post-tool",
          adapter: "claude-code",
          session_id: "burst",
          metadata: { model: "hot-model", tokens_in: 1, tokens_out: 1 }
        }))
        const res = await call(server, "POST", "/engine/v1/signals/batch", { key: org.license_key, body: { signals } })
        expect(res.status).toBe(200)
        expect(res.body.results.every((r: { action?: string }) => r.action === "notify")).toBe(true)
      }
      const windows = Math.ceil((Date.now() - started) / 2000) + 1
      const counted = () => receiver.received.reduce((n, r) => n + firingsIn(chatText("discord", JSON.parse(r.body))), 0)
      await waitFor(async () => counted(), (n) => n >= 1000, { timeoutMs: 20_000, what: "messages covering all 1,000 firings" })
      await settle(2500)
      expect(counted()).toBe(1000)
      // One message at the first firing of each window, one summary at its end: at most two per window.
      expect(receiver.received.length).toBeLessThanOrEqual(2 * windows)
      expect(receiver.received.length).toBeLessThan(20)
    } finally {
      await receiver.close()
    }
  }, 60_000)

  it("budget warnings and exceeded reach the org's alert channels", async () => {
    const receiver = await startReceiver()
    try {
      const org = await newOrg()
      const alerts = await channel(org, { kind: "teams", url: receiver.url })
      expect((await api(org, "PATCH", "/org", { alert_channels: [alerts.id] })).status).toBe(200)
      const budget = await api(org, "POST", "/rules", {
        name: "Daily tokens",
        type: "budget",
        scope: "org",
        scope_id: org.org_id,
        condition: { window: "daily", metric: "tokens_total", threshold: 100 },
        action: "log"
      })
      expect(budget.status).toBe(201)
      for (const tokens of [85, 20]) {
        await call(server, "POST", "/engine/v1/signals", {
          key: org.license_key,
          body: { type: "post-tool", adapter: "cursor", session_id: "b", metadata: { model: "gpt-4o", tokens_in: tokens, tokens_out: 0 } }
        })
      }
      await waitFor(async () => receiver.received.length, (n) => n >= 2, { what: "the warning and the exceeded" })
      const titles = receiver.received.map((r) => chatText("teams", JSON.parse(r.body)))
      expect(titles[0]).toMatch(/Budget “Daily tokens” reached \d+% of its threshold: [\d,]+ tokens of 100 tokens/)
      expect(titles[1]).toMatch(/Budget “Daily tokens” was exceeded: [\d,]+ tokens of 100 tokens/)
    } finally {
      await receiver.close()
    }
  })

  it("an anomaly reaches the org's alert channels, in words", async () => {
    const receiver = await startReceiver()
    try {
      const org = await newOrg()
      const alerts = await channel(org, { kind: "slack", url: receiver.url })
      expect((await api(org, "PATCH", "/org", { alert_channels: [alerts.id] })).status).toBe(200)
      for (const tokens of [100, 110, 90, 100, 100, 1000]) {
        await call(server, "POST", "/engine/v1/signals", {
          key: org.license_key,
          body: { type: "post-tool", adapter: "cursor", session_id: "spike", metadata: { tokens_in: tokens } }
        })
      }
      await waitFor(async () => receiver.received.length, (n) => n >= 1, { what: "the anomaly message" })
      const text = chatText("slack", JSON.parse(receiver.received[0]!.body))
      expect(text).toContain("Unusual activity for ")
      expect(text).toContain("token spike")
      expect(text).toContain("Observed: 1,000 against a baseline of 100 (+900%)")
    } finally {
      await receiver.close()
    }
  })
})
