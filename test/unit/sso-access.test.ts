import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/scopes.ts"
import { admitEmail, domainOf, groupsOf, sessionScopes } from "../../src/domain/sso-access.ts"
import { normalizeDomains, ssoProblems } from "../../src/domain/sso.ts"

const domains = ["example.com", "corp.example.com"]

describe("admitEmail", () => {
  it("admits a verified address of an allowed domain, any case", () => {
    expect(admitEmail({ email: "Ada@Example.COM", email_verified: true }, domains)).toEqual({ email: "Ada@Example.COM" })
    expect(admitEmail({ email: "bo@corp.example.com" }, domains)).toEqual({ email: "bo@corp.example.com" })
  })

  it.each([
    [{}, "email_missing"],
    [{ email: "  " }, "email_missing"],
    [{ email: 42 }, "email_missing"],
    [{ email: "ada@example.com", email_verified: false }, "email_unverified"],
    [{ email: "ada@example.com", email_verified: "false" }, "email_unverified"],
    [{ email: "ada@evil.com", email_verified: true }, "domain_not_allowed"],
    [{ email: "ada@sub.corp.example.com", email_verified: true }, "domain_not_allowed"],
    [{ email: "ada@example.com.evil.com", email_verified: true }, "domain_not_allowed"],
    [{ email: "example.com", email_verified: true }, "domain_not_allowed"]
  ])("refuses %j as %s", (claims, refused) => {
    expect(admitEmail(claims, domains)).toEqual({ refused })
  })
})

describe("domainOf", () => {
  it("takes what follows the last @, lower case", () => {
    expect(domainOf("a@b@Example.com")).toBe("example.com")
    expect(domainOf("@example.com")).toBeUndefined()
    expect(domainOf("ada@")).toBeUndefined()
  })
})

describe("groupsOf", () => {
  it("reads the configured claim's strings only", () => {
    expect(groupsOf({ groups: ["eng", 3, "admins"] }, "groups")).toEqual(["eng", "admins"])
    expect(groupsOf({ groups: "eng" }, "groups")).toEqual([])
    expect(groupsOf({ groups: ["eng"] }, null)).toEqual([])
  })
})

describe("sessionScopes", () => {
  it("gives an admin every scope and a member none", () => {
    expect(sessionScopes({ role: "admin", groups: [] })).toEqual(allScopes)
    expect(sessionScopes({ role: "member", groups: ["admins"] })).toEqual([])
  })
})

describe("SSO settings checks", () => {
  const base = { issuer: "https://idp.example.com", client_id: "c", client_secret: "s", allowed_email_domains: ["example.com"] }
  it("takes https, and http on loopback only", () => {
    expect(ssoProblems(base)).toEqual([])
    expect(ssoProblems({ ...base, issuer: "http://localhost:8080" })).toEqual([])
    expect(ssoProblems({ ...base, issuer: "http://idp.example.com" })).toHaveLength(1)
    expect(ssoProblems({ ...base, issuer: "idp.example.com" })).toHaveLength(1)
  })
  it("wants at least one well-formed domain, kept in lower case once", () => {
    expect(ssoProblems({ ...base, allowed_email_domains: [] })).toHaveLength(1)
    expect(ssoProblems({ ...base, allowed_email_domains: ["exa mple.com"] })).toHaveLength(1)
    expect(normalizeDomains(["Example.com", "example.COM ", "b.org"])).toEqual(["example.com", "b.org"])
  })
})
