import { describe, expect, it } from "vitest"
import { ssoProblems } from "../../src/domain/sso.ts"
import { roleForGroups } from "../../src/domain/sso-roles.ts"

describe("group → role mapping", () => {
  const mapping = [{ group: "signal-admins", role: "admin" }, { group: "engineering", role: "member" }] as const

  it("gives the role of the first entry whose group the person is in, in the mapping's order", () => {
    expect(roleForGroups(mapping, ["engineering", "signal-admins"])).toBe("admin")
    expect(roleForGroups(mapping, ["engineering"])).toBe("member")
    expect(roleForGroups([...mapping].reverse(), ["engineering", "signal-admins"])).toBe("member")
  })

  it("gives none for a person in no mapped group, or with no mapping (their role stays)", () => {
    expect(roleForGroups(mapping, ["marketing"])).toBeUndefined()
    expect(roleForGroups(mapping, [])).toBeUndefined()
    expect(roleForGroups([], ["signal-admins"])).toBeUndefined()
  })

  it("compares group names exactly", () => {
    expect(roleForGroups(mapping, ["Signal-Admins"])).toBeUndefined()
  })

  it("needs the groups claim to read groups from", () => {
    const base = { issuer: "https://idp.example.com", client_id: "c", client_secret: "s", allowed_email_domains: ["example.com"] }
    expect(ssoProblems({ ...base, group_roles: [{ group: "g", role: "admin" }] })).toEqual([
      "group_roles: needs groups_claim, the claim the groups are read from"
    ])
    expect(ssoProblems({ ...base, groups_claim: "groups", group_roles: [{ group: "g", role: "admin" }] })).toEqual([])
  })
})
