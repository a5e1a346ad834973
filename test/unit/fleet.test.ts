import { describe, expect, it } from "vitest"
import { fleetCredentialPattern, generateFleetCredential, identityProblem, isFleetCredential } from "../../src/domain/fleet.ts"
import { keyHint } from "../../src/domain/credentials.ts"
import { logRecordOutcomes } from "../../src/domain/otlp-events.ts"

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
const apiRequest = (extra: ReadonlyArray<ReturnType<typeof attr>>) => ({
  body: { stringValue: "claude_code.api_request" },
  attributes: [attr("session.id", "s"), attr("event.name", "api_request"), attr("request_id", "req_1"), attr("model", "m"), ...extra]
})
const request = (resource: ReadonlyArray<ReturnType<typeof attr>>, records: ReadonlyArray<unknown>) => ({
  resourceLogs: [{ resource: { attributes: resource }, scopeLogs: [{ logRecords: records }] }]
})

describe("fleet credentials", () => {
  it("have a shape of their own per environment, recognisable by prefix, hinted like keys", () => {
    const live = generateFleetCredential("live")
    expect(live).toMatch(fleetCredentialPattern)
    expect(generateFleetCredential("test")).toMatch(/^flt_test_[0-9a-f]{32}$/)
    expect(isFleetCredential(live)).toBe(true)
    expect(isFleetCredential("lic_0123456789abcdef0123")).toBe(false)
    expect(keyHint(live)).toBe(`flt_live_…${live.slice(-4)}`)
  })

  it("take e-mail addresses as identities, and say why another value is not one", () => {
    expect(identityProblem("Alice@Example.com")).toBeUndefined()
    expect(identityProblem(undefined)).toBe("no user identity (user.email)")
    expect(identityProblem("  ")).toBe("no user identity (user.email)")
    expect(identityProblem("jdoe")).toBe("the user identity is not an e-mail address")
    expect(identityProblem(`${"a".repeat(320)}@example.com`)).toBe("the user identity is not an e-mail address")
  })

  it("read each record's user.email, the record's over the resource's", () => {
    const outcomes = logRecordOutcomes(request([attr("user.email", "resource@example.com")], [
      apiRequest([attr("user.email", "record@example.com")]),
      apiRequest([]),
      { body: { stringValue: "claude_code.api_request" }, attributes: [attr("event.name", "api_request"), attr("user.email", "x@example.com")] }
    ]))
    expect(outcomes.map((o) => o._tag)).toEqual(["Signal", "Signal", "Rejected"])
    expect(outcomes.map((o) => ("identity" in o ? o.identity : undefined))).toEqual([
      "record@example.com",
      "resource@example.com",
      "x@example.com"
    ])
    expect(logRecordOutcomes(request([], [apiRequest([])]))[0]).toMatchObject({ _tag: "Signal", identity: undefined })
  })
})
