import { describe, expect, it } from "vitest"
import { productivityPoints } from "../../src/domain/tool-metrics.ts"

// Claude Code's `claude_code.commit.count` as its exporter sends it, one point at a time, and the
// point the service keeps of it.

const attributes = (o: Record<string, unknown>) =>
  Object.entries(o).map(([key, value]) => ({ key, value: typeof value === "string" ? { stringValue: value } : value }))
const commits = (point: Record<string, unknown>, resource: Record<string, unknown> | undefined = { "service.name": "claude-code" }) => ({
  resourceMetrics: [{
    ...(resource === undefined ? {} : { resource: { attributes: attributes(resource) } }),
    scopeMetrics: [{
      metrics: [{ name: "claude_code.commit.count", sum: { aggregationTemporality: "AGGREGATION_TEMPORALITY_DELTA", isMonotonic: true, dataPoints: [point] } }]
    }]
  }]
})
const point = (o: Record<string, unknown>) => ({
  startTimeUnixNano: "1795873632279000000",
  timeUnixNano: "1795873692548000000",
  asInt: "1",
  attributes: attributes({ "session.id": "s-1", "user.account_uuid": "acc-1" }),
  ...o
})

describe("a productivity point's window, value and identity", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, Record<string, unknown> | undefined]> = [
    ["times as decimal strings, kept as sent", {}, { startNs: "1795873632279000000", timeNs: "1795873692548000000", value: 1 }],
    ["times as numbers, whole nanoseconds", { startTimeUnixNano: 1795873632.9, timeUnixNano: 1795873692 }, {
      startNs: "1795873632",
      timeNs: "1795873692",
      value: 1
    }],
    ["leading zeros dropped", { startTimeUnixNano: "000", timeUnixNano: "0001795873692548000" }, { startNs: "0", timeNs: "1795873692548000", value: 1 }],
    ["no start: the window starts at 0", { startTimeUnixNano: undefined }, { startNs: "0", timeNs: "1795873692548000000", value: 1 }],
    ["a start that is not nanoseconds: 0", { startTimeUnixNano: "1795873632279000000Z" }, { startNs: "0", timeNs: "1795873692548000000", value: 1 }],
    ["a start with text before it: 0", { startTimeUnixNano: "t1795873632279000000" }, { startNs: "0", timeNs: "1795873692548000000", value: 1 }],
    ["a start of more than 20 digits: 0", { startTimeUnixNano: "1".repeat(21) }, { startNs: "0", timeNs: "1795873692548000000", value: 1 }],
    ["a start of 20 digits: kept", { startTimeUnixNano: "1".repeat(20) }, { startNs: "1".repeat(20), timeNs: "1795873692548000000", value: 1 }],
    ["a start given as an object: 0", { startTimeUnixNano: { low: 1 } }, { startNs: "0", timeNs: "1795873692548000000", value: 1 }],
    ["a value of 0 is a point", { asInt: "0" }, { startNs: "1795873632279000000", timeNs: "1795873692548000000", value: 0 }],
    ["a double value", { asInt: undefined, asDouble: 2.5 }, { startNs: "1795873632279000000", timeNs: "1795873692548000000", value: 2.5 }],
    ["a value as padded text", { asInt: " 3 " }, { startNs: "1795873632279000000", timeNs: "1795873692548000000", value: 3 }],
    ["an empty value: no point", { asInt: "" }, undefined],
    ["a blank value: no point", { asInt: "  " }, undefined],
    ["a value that is not a number: no point", { asInt: true }, undefined],
    ["a time of 0: no point", { timeUnixNano: "0" }, undefined],
    ["a time of zeros: no point", { timeUnixNano: "0000" }, undefined],
    ["a time that is not nanoseconds: no point", { timeUnixNano: "2026-11-28T16:00:00Z" }, undefined]
  ]
  it.each(cases)("%s", (_, o, expected) => {
    const [kept, ...rest] = productivityPoints(commits(point(o)))
    expect(rest).toEqual([])
    expect(kept === undefined ? undefined : { startNs: kept.startNs, timeNs: kept.timeNs, value: kept.value }).toStrictEqual(expected)
  })

  it("attributes a point to its user.email, over the resource's, and to no one without a text one", () => {
    const identity = (pointEmail: unknown, resourceEmail: unknown) =>
      productivityPoints(commits(
        point({ attributes: attributes({ "session.id": "s-1", ...(pointEmail === undefined ? {} : { "user.email": pointEmail }) }) }),
        resourceEmail === undefined ? {} : { "user.email": resourceEmail }
      ))[0]?.identity
    expect(identity("dev@example.com", "team@example.com")).toBe("dev@example.com")
    expect(identity(undefined, "team@example.com")).toBe("team@example.com")
    expect(identity({ intValue: 7 }, "team@example.com")).toBeUndefined()
    expect(identity(undefined, undefined)).toBeUndefined()
  })

  it("keeps a whole point as it came, from a resource without attributes", () => {
    expect(productivityPoints(commits(point({}), undefined))).toStrictEqual([{
      tool: "claude-code",
      figure: "commits",
      series: expect.any(String),
      cumulative: false,
      startNs: "1795873632279000000",
      timeNs: "1795873692548000000",
      value: 1,
      identity: undefined
    }])
  })

  it("names a series the same whatever order its attributes come in, and keeps its id across versions", () => {
    const series = (order: ReadonlyArray<string>) => {
      const all: Record<string, string> = { "session.id": "s-1", "user.account_uuid": "acc-1", "organization.id": "org-1", "terminal.type": "vscode" }
      const resource = { "service.name": "claude-code", "service.version": "2.1.3", "os.type": "linux" }
      const entries = Object.fromEntries(order.map((k) => [k, all[k]!]))
      const reversed = Object.fromEntries(Object.entries(resource).reverse())
      return [
        productivityPoints(commits(point({ attributes: attributes(entries) }), resource))[0]!.series,
        productivityPoints(commits(point({ attributes: attributes(entries) }), reversed))[0]!.series
      ]
    }
    const a = series(["session.id", "user.account_uuid", "organization.id", "terminal.type"])
    const b = series(["terminal.type", "organization.id", "session.id", "user.account_uuid"])
    expect(new Set([...a, ...b]).size).toBe(1)
    // The id of a series stored before must stay its id: a cumulative series is read against it.
    expect(a[0]).toBe("wCksymUKgMSIc7ayAEY5LKdwKF3vjQIo")
  })

  it("reads the temporality by its name or its number", () => {
    const cumulative = (aggregationTemporality: unknown) => {
      const request = commits(point({}))
      request.resourceMetrics[0]!.scopeMetrics[0]!.metrics[0]!.sum.aggregationTemporality = aggregationTemporality as string
      return productivityPoints(request)[0]?.cumulative
    }
    expect([2, "AGGREGATION_TEMPORALITY_CUMULATIVE", 1, "AGGREGATION_TEMPORALITY_DELTA", undefined].map(cumulative)).toEqual([true, true, false, false, false])
  })

  it("skips what is not a resource, a scope, a metric or a point", () => {
    expect(
      productivityPoints({
        resourceMetrics: [null, 5, {
          scopeMetrics: [null, { metrics: [null, { name: 7, sum: {} }, { name: "claude_code.commit.count", sum: { dataPoints: [null] } }] }]
        }]
      })
    )
      .toEqual([])
  })
})
