import { describe, expect, it } from "vitest"
import { auditResources, auditTargetOf, redact, secretFields } from "../../src/domain/audit.ts"
import { ManagementApi } from "../../src/http/management/api.ts"

describe("what an audit entry names", () => {
  it.each([
    ["/api/v1/rules", "create", { resource: "rule", action: "rule.create", idInPath: false }],
    ["/api/v1/rules/:id", "remove", { resource: "rule", action: "rule.delete", idInPath: true }],
    ["/api/v1/api-keys/:id", "revoke", { resource: "api_key", action: "api_key.revoke", idInPath: true }],
    ["/api/v1/webhooks/:id/test", "test", { resource: "webhook", action: "webhook.test", idInPath: true }],
    ["/api/v1/org", "update", { resource: "org", action: "org.update", idInPath: false }]
  ])("%s (%s)", (path, name, expected) => {
    expect(auditTargetOf(path, name)).toEqual(expected)
  })

  it("every write endpoint of the management API changes a known resource", () => {
    const writes = Object.values(ManagementApi.groups).flatMap((g) => Object.values(g.endpoints)).filter((e) => e.method !== "GET")
    const unknown = writes.filter((e) => auditTargetOf(e.path, e.identifier) === undefined).map((e) => `${e.method} ${e.path}`)
    expect(unknown).toEqual([])
  })
})

describe("redaction", () => {
  it("replaces a set secret, keeps an unset one null, and drops delivery bookkeeping", () => {
    expect(redact("webhook", { id: "wh_1", url: "https://x", secret_ciphertext: "v1:abc", leased_until: "2026-01-01" })).toEqual({
      id: "wh_1",
      url: "https://x",
      secret_ciphertext: "[redacted]"
    })
    expect(redact("channel", { id: "ch_1", url_ciphertext: null, url_origin: null })).toEqual({ id: "ch_1", url_ciphertext: null, url_origin: null })
  })

  it("declares a list for every resource, and the credentials' hashes and seals are on it", () => {
    expect(Object.keys(secretFields).sort()).toEqual([...auditResources].sort())
    expect(secretFields.api_key).toContain("key_hash")
    expect(secretFields.license_key).toContain("key_hash")
    expect(secretFields.webhook).toContain("secret_ciphertext")
    expect(secretFields.channel).toContain("url_ciphertext")
  })
})

describe("what each write is recorded as", () => {
  it("names the resource of every write path of the API by its first segment", () => {
    const writes = Object.values(ManagementApi.groups).flatMap((g) => Object.values(g.endpoints)).filter((e) => e.method !== "GET")
    const bySegment = Object.fromEntries(writes.map((e) => [e.path.split("/")[3], auditTargetOf(e.path, e.identifier)?.resource]))
    expect(bySegment).toEqual({
      org: "org",
      users: "user",
      teams: "team",
      projects: "project",
      "api-keys": "api_key",
      "license-keys": "license_key",
      webhooks: "webhook",
      channels: "channel",
      rules: "rule",
      "report-schedules": "report_schedule",
      sso: "sso",
      "fleet-credentials": "fleet_credential"
    })
  })

  it("knows no resource outside the management API's write paths", () => {
    expect(auditTargetOf("/api/v1/usage", "report")).toBeUndefined()
    expect(auditTargetOf("/engine/v1/signals", "create")).toBeUndefined()
    expect(auditTargetOf("/api/v2/rules", "create")).toBeUndefined()
  })

  it("keeps out exactly the secrets and what stands for them, per resource", () => {
    expect(secretFields).toEqual({
      org: [],
      user: [],
      team: [],
      project: [],
      api_key: ["key", "key_hash"],
      license_key: ["key", "key_hash"],
      webhook: ["secret", "secret_ciphertext"],
      channel: ["url", "url_ciphertext"],
      rule: [],
      report_schedule: [],
      sso: ["client_secret_ciphertext"],
      fleet_credential: ["key", "key_hash"]
    })
    const row = { id: "x_1", key: "k", key_hash: "h", secret: "s", url: "u", client_secret_ciphertext: "c", name: "n" }
    expect(redact("fleet_credential", row)).toEqual({ ...row, key: "[redacted]", key_hash: "[redacted]" })
    expect(redact("sso", row)).toEqual({ ...row, client_secret_ciphertext: "[redacted]" })
    expect(redact("rule", row)).toEqual(row)
  })
})
