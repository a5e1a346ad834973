import { describe, expect, it } from "vitest"
import { generatedSchemas } from "../../src/cli/schemas.ts"

// GET /api/v1/productivity and /api/v1/coverage: a client reads what each figure counts, and that
// it is a plain number, from the OpenAPI document.
describe("the telemetry views in the management OpenAPI document", () => {
  const schemas = (generatedSchemas()["management.openapi.json"] as { components: { schemas: Record<string, any> } }).components.schemas

  it.each(["ProductivityFigures", "ProductivityGroup", "CoverageTotals", "CoverageUser"])("describes every field of %s", (name) => {
    const properties = Object.entries(schemas[name].properties as Record<string, { description?: string }>)
    expect(properties.length).toBeGreaterThan(5)
    for (const [field, schema] of properties) {
      if (["user_id", "email", "name"].includes(field)) continue
      expect(schema.description, `${name}.${field}`).toMatch(/\w{3,}/)
    }
  })

  it("names the counter each productivity figure comes from, as a finite number", () => {
    const figures = schemas["ProductivityFigures"].properties
    expect(figures.commits).toEqual({ type: "number", description: "git commits the tools made (claude_code.commit.count)" })
    expect(figures.lines_added.description).toContain("claude_code.lines_of_code.count")
    expect(figures.edits_rejected.description).toContain("reject")
    expect(schemas["CoverageTotals"].properties.none).toEqual({ type: "number", description: "users never seen" })
  })

  it("gives the usage report's spend as a described finite number, in its totals and each group", () => {
    const doc = generatedSchemas()["management.openapi.json"] as any
    const report = doc.paths["/api/v1/usage"].get.responses["200"].content["application/json"].schema.properties
    const usd = { type: "number", description: "USD, to the nano-dollar" }
    expect(report.totals.properties.cost_usd).toEqual(usd)
    expect(report.data.items.properties.cost_usd).toEqual(usd)
  })
})
