import { describe, expect, it } from "@effect/vitest"
import { parse } from "csv-parse/sync"
import { stringify } from "csv-stringify/sync"
import fc from "fast-check"
import {
  csvRecord,
  exportColumns,
  exportDimensions,
  exportDimensionsShape,
  type ExportRow,
  jsonRecord,
  parseExportDimensions
} from "../../src/domain/usage-export.ts"

const figures = { signals: 2, sessions: 1, tokens_in: 10, tokens_out: 5, cost_usd: 0.25, error_count: 0 }

describe("usage export rows", () => {
  it("group_by: any order or repetition gives the canonical order; absent is day, user, project, model", () => {
    expect(parseExportDimensions(undefined)).toEqual(["day", "user", "project", "model"])
    expect(parseExportDimensions("model,team,day,model")).toEqual(["day", "team", "model"])
    fc.assert(fc.property(fc.array(fc.constantFrom(...exportDimensions), { minLength: 1 }), (dims) => {
      const input = dims.join(",")
      expect(exportDimensionsShape.test(input)).toBe(true)
      expect(parseExportDimensions(input)).toEqual(exportDimensions.filter((d) => dims.includes(d)))
    }))
    for (const bad of ["", "week", "day,", "day, user", ",day", "DAY"]) expect(exportDimensionsShape.test(bad), bad).toBe(false)
  })

  it("columns: each dimension's, in order, then the figures", () => {
    expect(exportColumns(["user", "team"])).toEqual([
      "user_id",
      "user_email",
      "user_name",
      "team_id",
      "team_name",
      "signals",
      "sessions",
      "tokens_in",
      "tokens_out",
      "cost_usd",
      "error_count"
    ])
  })

  it("a CSV record reads back as the row, names with quotes, commas and line breaks included; formulas are defused", () => {
    const columns = exportColumns(["user", "project"])
    fc.assert(fc.property(fc.string(), fc.option(fc.string(), { nil: null }), (name, project) => {
      const row: ExportRow = { user_id: "user_1", user_email: "a@b.c", user_name: name, project_id: project, project_name: null, ...figures }
      const [read] = parse(stringify([csvRecord(row, columns)]), { columns: columns as Array<string> }) as Array<Record<string, string>>
      const cell = (v: string | null) => (v === null ? "" : /^[=+\-@\t\r]/.test(v) ? `'${v}` : v)
      expect(read).toEqual({
        ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, String(v)])),
        user_id: "user_1",
        user_email: "a@b.c",
        user_name: cell(name),
        project_id: cell(project),
        project_name: ""
      })
    }))
    expect(csvRecord({ user_name: "=SUM(A1)", ...figures }, ["user_name"])).toEqual(["'=SUM(A1)"])
    expect(csvRecord({ user_name: "-2", ...figures }, ["user_name", "cost_usd"])).toEqual(["'-2", 0.25])
  })

  it("a JSON line keeps values as they are, null where absent", () => {
    expect(jsonRecord({ model: "=x", ...figures }, exportColumns(["project", "model"]))).toEqual({
      project_id: null,
      project_name: null,
      model: "=x",
      ...figures
    })
  })
})
