import { describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, freshDatabase, startServer, type TestServer } from "../../support/harness.ts"
import { startReceiver } from "../../support/receiver.ts"
import { startSmtpServer } from "../../support/smtp.ts"
import { waitFor } from "../../support/wait.ts"
import { chatText, expectChatFormat } from "../notifications-helpers.ts"
import { api, makeDue, mondayUtc, reportEnv, seedSpend, sqlOn } from "./report-helpers.ts"

/** Waits out further poll and dispatch rounds, for checks that nothing more is sent: no condition marks "never". */
const settle = (ms = 1_000) => new Promise((r) => setTimeout(r, ms))

const kinds = ["slack", "teams", "discord"] as const

/**
 * An org with spend last week (two users, a team, two models) and the week before, and a weekly
 * schedule sending to one channel of each chat kind on `receiverUrl` (and to `more` channels).
 */
const setUp = async (server: TestServer, receiverUrl: string, more: ReadonlyArray<Record<string, unknown>> = []) => {
  const org = await bootstrapOrg(server.databaseUrl, "reports", "team")
  const lead = (await api(server, org, "POST", "/users", { email: "ada@example.com", name: "Ada" })).body.id as string
  await api(server, org, "POST", "/teams", { name: "Platform", member_ids: [lead] })
  const lastWeek = mondayUtc(1)
  await seedSpend(server.databaseUrl, org, lead, lastWeek, [
    { hours: 1, model: "claude-sonnet-4", cost: 1.5, tokens: 1000 },
    { hours: 30, model: "claude-sonnet-4", cost: 1.5, tokens: 1000 },
    { hours: 100, model: "claude-sonnet-4", cost: 1.5, tokens: 1000 }
  ])
  await seedSpend(server.databaseUrl, org, org.user_id, lastWeek, [{ hours: 5, model: "gpt-4o", cost: 0.5, tokens: 200 }])
  await seedSpend(server.databaseUrl, org, lead, mondayUtc(2), [{ hours: 2, model: "claude-sonnet-4", cost: 2, tokens: 500 }])
  // This week's spend is not last week's.
  await seedSpend(server.databaseUrl, org, lead, mondayUtc(0), [{ hours: 0, model: "gpt-4o", cost: 40, tokens: 9000 }])
  const channels: Array<string> = []
  for (const kind of kinds) {
    const res = await api(server, org, "POST", "/channels", { name: `finance ${kind}`, kind, url: `${receiverUrl}/${kind}` })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    channels.push(res.body.id)
  }
  for (const body of more) {
    const res = await api(server, org, "POST", "/channels", { name: `more ${channels.length}`, ...body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    channels.push(res.body.id)
  }
  const schedule = await api(server, org, "POST", "/report-schedules", { name: "Finance", period: "weekly", channels })
  expect(schedule.status, JSON.stringify(schedule.body)).toBe(201)
  return { org, scheduleId: schedule.body.id as string }
}

const byKind = (receiver: Awaited<ReturnType<typeof startReceiver>>, kind: string) =>
  receiver.received.filter((r) => r.path === `/hook/${kind}`).map((r) => JSON.parse(r.body))

const expectOneReportPerChannel = (receiver: Awaited<ReturnType<typeof startReceiver>>) => {
  for (const kind of kinds) {
    const bodies = byKind(receiver, kind)
    expect(bodies, kind).toHaveLength(1)
    expectChatFormat(kind, bodies[0])
  }
}

describe("scheduled reports", () => {
  it("two nodes over one database send a due report once, with last week's figures, to every channel kind", { timeout: 90_000 }, async () => {
    const receiver = await startReceiver()
    const smtp = await startSmtpServer()
    const databaseUrl = await freshDatabase()
    const env = { ...reportEnv, SMTP_URL: smtp.url }
    const nodes = [await startServer({ databaseUrl, env }), await startServer({ databaseUrl, env })]
    try {
      const { org, scheduleId } = await setUp(nodes[0]!, receiver.url, [{ kind: "email", addresses: ["finance@example.com"] }])
      await makeDue(databaseUrl, scheduleId)
      await waitFor(async () => receiver.received.length + smtp.received.length, (n) => n >= kinds.length + 1, { what: "a report per channel" })
      await settle()
      expectOneReportPerChannel(receiver)
      expect(smtp.received).toHaveLength(1)
      expect(smtp.received[0]!.to).toEqual(["finance@example.com"])
      expect(smtp.received[0]!.subject).toBe("Weekly spend report “Finance”: $5.00")
      expect(smtp.received[0]!.text).toContain("Top users: Ada <ada@example.com> $4.50 (3,000 tokens)")

      // Slack's mrkdwn shows &lt; and &gt; as < and >.
      const text = chatText("slack", byKind(receiver, "slack")[0]).replaceAll("&lt;", "<").replaceAll("&gt;", ">")
      expect(text).toContain("Weekly spend report “Finance”: $5.00")
      expect(text).toContain(`Period: ${mondayUtc(1).toISOString().slice(0, 10)} to `)
      expect(text).toContain("Spend: $5.00, 3,200 tokens, 4 signals in 2 sessions")
      expect(text).toContain("Change: +150% from $2.00 (tokens 500 → 3,200)")
      expect(text).toContain("https://signals.example.com/#/overview")
      expect(text).toContain("Top users: Ada <ada@example.com> $4.50 (3,000 tokens); Admin <admin@localhost> $0.50 (200 tokens)")
      expect(text).toContain("Top teams: Platform $4.50 (3,000 tokens); Default $0.50 (200 tokens)")
      expect(text).toContain("Top models: claude-sonnet-4 $4.50 (3,000 tokens); gpt-4o $0.50 (200 tokens)")
      expect(text).not.toContain("$40")
      for (const kind of ["teams", "discord"] as const) {
        expect(chatText(kind, byKind(receiver, kind)[0])).toContain("Top users: Ada <ada@example.com> $4.50")
      }

      const after = (await api(nodes[1]!, org, "GET", `/report-schedules/${scheduleId}`)).body
      expect(after.last_sent_at).not.toBeNull()
      expect(Date.parse(after.next_due_at)).toBe(mondayUtc(-1).getTime())
    } finally {
      for (const node of nodes) await node.stop()
      await receiver.close()
      await smtp.close()
    }
  })

  it("a report due while no node runs is sent once when one starts, and not again after a restart or a repeated claim", { timeout: 90_000 }, async () => {
    const receiver = await startReceiver()
    const databaseUrl = await freshDatabase()
    let node = await startServer({ databaseUrl, env: reportEnv })
    try {
      const { scheduleId } = await setUp(node, receiver.url)
      await node.stop()
      await makeDue(databaseUrl, scheduleId)
      node = await startServer({ databaseUrl, env: reportEnv })
      await waitFor(async () => receiver.received.length, (n) => n >= kinds.length, { what: "a report per channel" })
      await node.stop()
      node = await startServer({ databaseUrl, env: reportEnv })
      await settle()
      expectOneReportPerChannel(receiver)

      // The same period claimed again (as if a node had moved the due time back): its messages
      // are the ones queued already, so nothing is sent twice.
      const [{ last_sent_at: before }] = await sqlOn(databaseUrl, "SELECT last_sent_at FROM report_schedules WHERE id = $1", [scheduleId])
      await makeDue(databaseUrl, scheduleId)
      await waitFor(
        () => sqlOn(databaseUrl, "SELECT last_sent_at FROM report_schedules WHERE id = $1", [scheduleId]),
        (rows) => rows[0].last_sent_at.getTime() > before.getTime(),
        { what: "the schedule to be claimed again" }
      )
      await settle()
      expectOneReportPerChannel(receiver)
    } finally {
      await node.stop()
      await receiver.close()
    }
  })

  it("a disabled schedule sends nothing when due", { timeout: 60_000 }, async () => {
    const receiver = await startReceiver()
    const node = await startServer({ env: reportEnv })
    try {
      const { org, scheduleId } = await setUp(node, receiver.url)
      expect((await api(node, org as Bootstrapped, "PATCH", `/report-schedules/${scheduleId}`, { enabled: false })).status).toBe(200)
      await makeDue(node.databaseUrl, scheduleId)
      await settle()
      expect(receiver.received).toHaveLength(0)
      expect((await api(node, org, "GET", `/report-schedules/${scheduleId}`)).body.last_sent_at).toBeNull()
    } finally {
      await node.stop()
      await receiver.close()
    }
  })
})
