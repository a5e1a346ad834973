import { describe, expect, it } from "vitest"
import { scrubSecrets } from "../../src/observability/logging.ts"

describe("JSON log lines never print a key", () => {
  it("replaces API keys (any prefix), license keys and bearer credentials, and leaves ids alone", () => {
    const apiKey = `sek_live_${"ab12".repeat(8)}`
    const custom = `acme_test_${"0f".repeat(16)}`
    const license = `lic_${"9".repeat(20)}`
    const text = JSON.stringify({
      message: `key ${apiKey} and ${custom}; license ${license}; authorization: Bearer opaque-token-123`,
      org_id: "org_01a21537fa3762660899a5de27056cbd",
      request_id: "req_a8bd40b978b23c512aa672c1"
    })
    const scrubbed = scrubSecrets(text)
    for (const secret of [apiKey, custom, license, "opaque-token-123"]) expect(scrubbed).not.toContain(secret)
    expect(JSON.parse(scrubbed)).toEqual({
      message: "key [redacted] and [redacted]; license [redacted]; authorization: Bearer [redacted]",
      org_id: "org_01a21537fa3762660899a5de27056cbd",
      request_id: "req_a8bd40b978b23c512aa672c1"
    })
  })
})
