import { describe, expect, it } from "vitest"
import { productivityPoints } from "../../src/domain/tool-metrics.ts"

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
/** The plain form the OTLP codec decodes a request to (int64 as strings, enums by name). */
const request = (metrics: ReadonlyArray<Record<string, unknown>>, resource = "claude-code") => ({
  resourceMetrics: [{ resource: { attributes: [attr("service.name", resource)] }, scopeMetrics: [{ metrics }] }]
})
const sum = (name: string, temporality: string, points: ReadonlyArray<Record<string, unknown>>) => ({
  name,
  sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: points }
})
const point = (value: Record<string, unknown>, attributes: Record<string, string> = {}, start = "1000000000", time = "2000000000") => ({
  startTimeUnixNano: start,
  timeUnixNano: time,
  ...value,
  attributes: Object.entries({ "session.id": "s-1", ...attributes }).map(([k, v]) => attr(k, v))
})
const DELTA = "AGGREGATION_TEMPORALITY_DELTA"
const CUMULATIVE = "AGGREGATION_TEMPORALITY_CUMULATIVE"

describe("the tools' productivity counters", () => {
  it("names each known counter's figure by its attributes", () => {
    const points = productivityPoints(request([
      sum("claude_code.lines_of_code.count", DELTA, [point({ asDouble: 4 }, { type: "added" }), point({ asDouble: 1 }, { type: "removed" })]),
      sum("claude_code.commit.count", DELTA, [point({ asInt: "2" })]),
      sum("claude_code.pull_request.count", DELTA, [point({ asDouble: 1 })]),
      sum("claude_code.code_edit_tool.decision", DELTA, [point({ asDouble: 3 }, { decision: "accept" }), point({ asDouble: 1 }, { decision: "reject" })])
    ]))
    expect(points.map((p) => [p.figure, p.value, p.tool])).toEqual([
      ["lines_added", 4, "claude-code"],
      ["lines_removed", 1, "claude-code"],
      ["commits", 2, "claude-code"],
      ["pull_requests", 1, "claude-code"],
      ["edits_accepted", 3, "claude-code"],
      ["edits_rejected", 1, "claude-code"]
    ])
    expect(new Set(points.map((p) => p.series)).size).toBe(points.length)
    const gemini = productivityPoints(request([
      sum("gemini_cli.lines.changed", CUMULATIVE, [point({ asInt: "7" }, { type: "added" }), point({ asInt: "2" }, { type: "removed" })])
    ], "gemini-cli"))
    expect(gemini.map((p) => [p.tool, p.figure, p.value, p.cumulative])).toEqual([
      ["gemini-cli", "lines_added", 7, true],
      ["gemini-cli", "lines_removed", 2, true]
    ])
  })

  it("keeps the temporality, the window in nanoseconds and the series of a repeated export", () => {
    const at = (time: string, value: number) =>
      productivityPoints(request([sum("claude_code.commit.count", CUMULATIVE, [point({ asDouble: value }, {}, "1795873632279000000", time)])]))[0]!
    const first = at("1795873632548000000", 1)
    const next = at("1795873692548000000", 2)
    expect(first).toMatchObject({ cumulative: true, startNs: "1795873632279000000", timeNs: "1795873632548000000" })
    expect(next.series).toBe(first.series)
    // The JSON encoding's number for the enum, as a hand-made body may carry it.
    const numeric = productivityPoints(
      request([{ name: "claude_code.commit.count", sum: { aggregationTemporality: 1, dataPoints: [point({ asDouble: 1 })] } }])
    )
    expect(numeric[0]?.cumulative).toBe(false)
  })

  it("tells series apart by any attribute, of the point or the resource", () => {
    const one = (attributes: Record<string, string>, resource?: string) =>
      productivityPoints(request([sum("claude_code.commit.count", DELTA, [point({ asDouble: 1 }, attributes)])], resource))[0]!.series
    expect(one({ "session.id": "s-2" })).not.toBe(one({}))
    expect(one({}, "other")).not.toBe(one({}))
    expect(one({})).toBe(one({}))
  })

  it("skips other metrics, gauges, unknown attribute values and points without a time or a usable value", () => {
    expect(productivityPoints(request([
      sum("claude_code.token.usage", DELTA, [point({ asDouble: 10 }, { type: "input" })]),
      { name: "claude_code.commit.count", gauge: { dataPoints: [point({ asDouble: 1 })] } },
      sum("claude_code.lines_of_code.count", DELTA, [point({ asDouble: 1 }, { type: "moved" })]),
      sum("claude_code.code_edit_tool.decision", DELTA, [point({ asDouble: 1 }, { decision: "maybe" })]),
      sum("claude_code.commit.count", DELTA, [
        point({ asDouble: 1 }, {}, "0", "0"),
        point({ asDouble: -1 }),
        point({ asDouble: Number.NaN }),
        point({ asInt: "x" }),
        point({})
      ])
    ]))).toEqual([])
    expect(productivityPoints({})).toEqual([])
    expect(productivityPoints({ resourceMetrics: "nope" })).toEqual([])
  })
})
