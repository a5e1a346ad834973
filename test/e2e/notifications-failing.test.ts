import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bootstrapOrg, call, startServer, type TestServer } from "../support/harness.ts"
import { startReceiver } from "../support/receiver.ts"
import { startSmtpServer } from "../support/smtp.ts"
import { waitFor } from "../support/wait.ts"
import { chatText, notificationEnv } from "./notifications-helpers.ts"

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

const newOrg = async () => {
  const org = await bootstrapOrg(server.databaseUrl, `ntf-fail-${++orgs}`, "team")
  const key = org.license_key_environment === "live" ? org.api_key_live! : org.api_key_test
  const api = (method: string, path: string, body?: unknown) => call(server, method, `/api/v1${path}`, { key, ...(body === undefined ? {} : { body }) })
  const channel = async (body: Record<string, unknown>) => {
    const res = await api("POST", "/channels", { name: `${body.kind} alerts`, ...body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.id as string
  }
  const signal = (model: string) =>
    call(server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      body: { type: "post-tool", adapter: "cursor", session_id: "f-1", metadata: { model } }
    })
  return { ...org, api, channel, signal }
}

const alertsOf = async (org: Awaited<ReturnType<typeof newOrg>>) =>
  (await org.api("GET", "/alerts")).body.data as ReadonlyArray<{ type: string; data: any; message: string }>

describe("failing webhooks and channels", () => {
  it("a webhook marked failing sends the admin alert to the alert channels, once", async () => {
    const hook = await startReceiver(() => ({ status: 500 }))
    const chat = await startReceiver()
    try {
      const org = await newOrg()
      const alerts = await org.channel({ kind: "slack", url: chat.url })
      expect((await org.api("PATCH", "/org", { alert_channels: [alerts] })).status).toBe(200)
      const webhook = await org.api("POST", "/webhooks", {
        url: hook.url,
        events: ["session.started"],
        secret: "s3cr3t-0123456789-abcdefghijklmnopqrstuvwxyz"
      })
      expect(webhook.status).toBe(201)
      await org.signal("gpt-4o")
      await waitFor(async () => chat.received.length, (n) => n >= 1, { timeoutMs: 30_000, what: "the alert message" })
      expect(hook.received).toHaveLength(5)
      const text = chatText("slack", JSON.parse(chat.received[0]!.body))
      expect(text).toContain("Webhook failing: deliveries paused")
      expect(text).toContain(webhook.body.id)
      expect(text).toContain("https://signals.example.com/#/alerts")
      expect((await alertsOf(org)).map((a) => a.type)).toEqual(["webhook.failing"])
      // More events queue for the paused webhook; the alert is not sent again. A management read
      // waits for the signal's commit (written behind its verdict); then, as this checks that
      // nothing more is sent, many dispatcher rounds (poll 20 ms) pass.
      await org.signal("gpt-4o")
      expect((await alertsOf(org)).map((a) => a.type)).toEqual(["webhook.failing"])
      await new Promise((r) => setTimeout(r, 1000))
      expect(chat.received).toHaveLength(1)
    } finally {
      await hook.close()
      await chat.close()
    }
  }, 60_000)

  it("a failing channel is retried on the schedule, marked failing, alerts, and resumes when re-enabled", async () => {
    const chat = await startReceiver(() => ({ status: 503 }))
    try {
      const org = await newOrg()
      const broken = await org.channel({ kind: "discord", url: chat.url, coalesce_seconds: 1 })
      const mail = await org.channel({ kind: "email", addresses: ["admin@example.com"] })
      expect((await org.api("PATCH", "/org", { alert_channels: [broken, mail] })).status).toBe(200)
      const rule = await org.api("POST", "/rules", {
        name: "watch",
        type: "model_filter",
        scope: "org",
        scope_id: org.org_id,
        condition: { model: { in: ["risky"] } },
        action: "notify",
        action_config: { channels: [broken] }
      })
      expect(rule.status).toBe(201)
      expect((await org.signal("risky")).body.action).toBe("notify")
      const failing = await waitFor(
        async () => (await org.api("GET", `/channels/${broken}`)).body,
        (c) => c.failing === true,
        { timeoutMs: 30_000, what: "the channel to be failing" }
      )
      expect(failing).toMatchObject({ enabled: true, failing: true })
      // Five attempts of the same message, spaced by the (scaled) schedule.
      expect(chat.received).toHaveLength(5)
      expect(new Set(chat.received.map((r) => r.body)).size).toBe(1)
      const gaps = chat.received.slice(1).map((r, i) => r.at - chat.received[i]!.at)
      expect(gaps[3]!).toBeGreaterThanOrEqual(7200 * 0.9)
      const alerts = await alertsOf(org)
      expect(alerts).toEqual([expect.objectContaining({
        type: "channel.failing",
        data: expect.objectContaining({ channel_id: broken, kind: "discord" })
      })])
      // The admin hears of it on the other alert channel (not on the failing one).
      const mailed = await waitFor(async () => smtp.received.filter((m) => m.to.includes("admin@example.com")), (m) => m.length >= 1)
      expect(mailed[0]!.subject).toBe("Notification channel failing: messages paused")
      expect(mailed[0]!.text).toContain(broken)
      expect(chat.received).toHaveLength(5)

      chat.behave(() => ({ status: 204 }))
      const enabled = await org.api("PATCH", `/channels/${broken}`, { enabled: true })
      expect(enabled.body).toMatchObject({ enabled: true, failing: false })
      await org.signal("risky")
      // The next firing goes out (the message that used up its attempts does not).
      await waitFor(async () => chat.received.length, (n) => n >= 6, { what: "a message after re-enabling" })
    } finally {
      await chat.close()
    }
  }, 60_000)
})
