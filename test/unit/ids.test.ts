import { describe, expect, it } from "@effect/vitest"
import { makeRequestId, signalIdForKey } from "../../src/domain/ids.ts"

describe("the id of a signal sent with an idempotency key", () => {
  const id = signalIdForKey("org_1", "live", "usr_1", "evt-7f3a")

  it("is the same for every copy, shaped as minted ids are", () => {
    expect(id).toMatch(/^sig_[0-9a-f]{32}$/)
    expect(signalIdForKey("org_1", "live", "usr_1", "evt-7f3a")).toBe(id)
  })

  it.each(
    [
      ["another org", ["org_2", "live", "usr_1", "evt-7f3a"]],
      ["the test environment", ["org_1", "test", "usr_1", "evt-7f3a"]],
      ["another user", ["org_1", "live", "usr_2", "evt-7f3a"]],
      ["another key", ["org_1", "live", "usr_1", "evt-7f3b"]],
      ["the same characters split differently", ["org_1", "live", "usr_1e", "vt-7f3a"]]
    ] as const
  )("differs for %s", (_, [org, env, user, key]) => {
    expect(signalIdForKey(org, env, user, key)).not.toBe(id)
  })
})

describe("request ids", () => {
  it("are req_ and 24 random hex digits, a fresh one each time", () => {
    const ids = Array.from({ length: 500 }, makeRequestId)
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })
})
