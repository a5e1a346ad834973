import { expect } from "vitest"

/** The service's configuration for notification suites: loopback receivers allowed, fast retries. */
export const notificationEnv = (smtpUrl: string): Record<string, string> => ({
  WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
  WEBHOOK_RETRY_SCALE: "0.001",
  WEBHOOK_TIMEOUT: "1 second",
  WEBHOOK_POLL_INTERVAL: "20 millis",
  SMTP_URL: smtpUrl,
  SMTP_FROM: "Signal alerts <alerts@signals.example.com>",
  PUBLIC_BASE_URL: "https://signals.example.com/",
  // One user's rule firing 1,000 times within seconds is past a key's burst: the engine's limits
  // are not what these tests are about (test/e2e/signal-limits.test.ts is).
  ENGINE_RATE_LIMIT_SCALE: "0"
})

/** Each chat service's incoming-webhook format, as its documentation gives it. */
export const expectChatFormat = (kind: "slack" | "teams" | "discord", body: any) => {
  if (kind === "slack") {
    expect(body).toEqual({ text: expect.any(String), blocks: expect.any(Array) })
    expect(body.blocks[0]).toEqual({ type: "section", text: { type: "mrkdwn", text: expect.any(String) } })
  } else if (kind === "teams") {
    expect(body).toMatchObject({ type: "message", attachments: [{ contentType: "application/vnd.microsoft.card.adaptive" }] })
    expect(body.attachments[0].content).toMatchObject({ type: "AdaptiveCard", version: expect.any(String), body: expect.any(Array) })
    for (const block of body.attachments[0].content.body) expect(block).toMatchObject({ type: "TextBlock", text: expect.any(String) })
  } else {
    expect(body).toEqual({ content: expect.any(String), allowed_mentions: { parse: [] } })
    expect(body.content.length).toBeLessThanOrEqual(2000)
  }
}

/** What a person reads in a chat message of that format. */
export const chatText = (kind: "slack" | "teams" | "discord", body: any): string => {
  if (kind === "slack") return body.text
  if (kind === "discord") return body.content
  const card = body.attachments[0].content
  return [...card.body.map((b: { text: string }) => b.text), ...(card.actions ?? []).map((a: { url: string }) => a.url)].join("\n")
}

/** How many firings a message says it covers: one for a first message, N for "fired N times more". */
export const firingsIn = (text: string): number => {
  const more = /fired ([\d,]+) times more/.exec(text)
  if (more) return Number(more[1]!.replaceAll(",", ""))
  if (/fired once more/.test(text)) return 1
  return /fired for/.test(text) ? 1 : 0
}
