import { describe, expect, it } from "vitest"
import { channelFailingMessage, webhookFailingMessage } from "../../src/domain/failing-alerts.ts"

describe("the alerts of a failing webhook or channel", () => {
  it("say what failed, the last error and the request that resumes it", () => {
    expect(webhookFailingMessage({ id: "wh_1", url: "https://hooks.example.com/x" }, 5, "evt_9", "HTTP 502")).toBe(
      "webhook wh_1 (https://hooks.example.com/x) is failing: 5 attempts to deliver evt_9 failed (last: HTTP 502); " +
        "deliveries are paused until it is re-enabled with POST /api/v1/webhooks/wh_1/enable"
    )
    expect(channelFailingMessage({ id: "ch_2", name: "Ops", kind: "slack" }, 5, "ntf_3", null)).toBe(
      "notification channel ch_2 (“Ops”, slack) is failing: 5 attempts to send message ntf_3 failed (last: unknown); " +
        "messages are paused until it is re-enabled with PATCH /api/v1/channels/ch_2 {\"enabled\": true}"
    )
  })
})
