import { describe, expect, it } from "vitest"
import { generatedSchemas } from "../../src/cli/schemas.ts"
import { endpointGrants, operationsFor, roles, rolesFor, teamLeadMayChange, visibilityFor } from "../../src/domain/roles.ts"

/** The management operations, as the document generated from ManagementApi's groups lists them. */
const operations = (): Array<{ readonly id: string; readonly op: Record<string, any> }> => {
  const doc = generatedSchemas()["management.openapi.json"] as { paths: Record<string, Record<string, any>> }
  return Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => ({ id: op.operationId as string, op })))
}

describe("the role table", () => {
  it("has a row for every management endpoint and none for an endpoint that is gone", () => {
    const ids = operations().map((o) => o.id).sort()
    expect(Object.keys(endpointGrants).sort()).toEqual(ids)
  })

  it("lets admins call everything, and no one else an endpoint it does not know", () => {
    for (const { id } of operations()) expect(visibilityFor(id, "admin"), id).toBe("org")
    expect(visibilityFor("nothing.here", "admin")).toBe("org")
    for (const role of ["team_lead", "viewer", "member"] as const) expect(visibilityFor("nothing.here", role)).toBeUndefined()
  })

  it("gives viewers every read but credentials and SSO settings, and no write", () => {
    const secretBearing = ["apiKeys.list", "licenseKeys.list", "fleet.list", "fleet.unknownIdentities", "sso.get"]
    for (const { id, op } of operations()) {
      const isRead = !/\.(create|update|delete|remove|revoke|deactivate|test|enable)$/.test(id)
      const expected = isRead && !secretBearing.includes(id) ? "org" : undefined
      expect(visibilityFor(id, "viewer"), `${id} ${JSON.stringify(op.summary ?? "")}`).toBe(expected)
    }
  })

  it("confines team leads and members to their teams' or their own activity", () => {
    for (
      const id of [
        "sessions.list",
        "sessions.get",
        "sessions.events",
        "events.list",
        "events.get",
        "usage.report",
        "goals.list",
        "usageExport.export",
        "telemetryViews.productivity",
        "telemetryViews.coverage"
      ]
    ) {
      expect(visibilityFor(id, "team_lead"), id).toBe("led_teams")
      expect(visibilityFor(id, "member"), id).toBe("own")
    }
    expect(visibilityFor("rules.create", "team_lead")).toBe("led_teams")
    expect(visibilityFor("rules.create", "member")).toBeUndefined()
    expect(visibilityFor("users.list", "team_lead")).toBeUndefined()
    expect(visibilityFor("teams.get", "team_lead")).toBe("org")
  })

  it("names each endpoint's roles, most powerful first", () => {
    expect(rolesFor("sessions.list")).toEqual(["admin", "team_lead", "viewer", "member"])
    expect(rolesFor("users.list")).toEqual(["admin", "viewer"])
    // The org itself (name, plan, time zone) is everyone's: the dashboard shows it to every role.
    expect(rolesFor("org.get")).toEqual(["admin", "team_lead", "viewer", "member"])
    expect(rolesFor("apiKeys.create")).toEqual(["admin"])
    expect(roles).toEqual(["admin", "team_lead", "viewer", "member"])
  })
})

describe("what the dashboard offers a role", () => {
  it("lists the operations the role may call, and only those", () => {
    expect(operationsFor("admin")).toEqual(Object.keys(endpointGrants))
    expect([...operationsFor("member")].sort()).toEqual(
      [
        "events.get",
        "events.list",
        "goals.list",
        "org.get",
        "sessions.events",
        "sessions.get",
        "sessions.list",
        "telemetryViews.coverage",
        "telemetryViews.productivity",
        "usage.report",
        "usageExport.export"
      ]
    )
    for (const role of roles) for (const id of operationsFor(role)) expect(visibilityFor(id, role), `${role} ${id}`).toBeDefined()
    expect(operationsFor("viewer")).not.toContain("apiKeys.list")
    expect(operationsFor("team_lead")).toContain("rules.create")
  })
})

describe("a team lead's rules", () => {
  const led = ["team_a"]
  it("may change a budget of a team they lead, and nothing else", () => {
    expect(teamLeadMayChange({ type: "budget", scope: "team", scope_id: "team_a" }, led)).toBe(true)
    expect(teamLeadMayChange({ type: "budget", scope: "team", scope_id: "team_b" }, led)).toBe(false)
    expect(teamLeadMayChange({ type: "budget", scope: "org", scope_id: "team_a" }, led)).toBe(false)
    expect(teamLeadMayChange({ type: "user_limit", scope: "team", scope_id: "team_a" }, led)).toBe(false)
    expect(teamLeadMayChange({ type: "budget", scope: "team", scope_id: "team_a" }, [])).toBe(false)
  })
})

describe("the OpenAPI document", () => {
  it("names every operation's roles (x-roles and its description)", () => {
    for (const { id, op } of operations()) {
      expect(op["x-roles"], id).toEqual(rolesFor(id))
      expect(op["x-roles"], id).toContain("admin")
      expect(op.description, id).toContain(`Roles (signed-in people): ${rolesFor(id).join(", ")}`)
    }
    const sessions = operations().find((o) => o.id === "sessions.get")!.op
    expect(sessions.description).toContain("team_lead: the teams they lead; member: their own activity only")
  })
})
