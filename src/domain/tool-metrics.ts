import { createHash } from "node:crypto"
import { attributesOf } from "./otlp-events.ts"

/**
 * The coding tools' own productivity counters (OTLP metrics) that the service keeps: lines of code
 * added and removed, commits, pull requests, accepted and rejected edits. Each OTLP data point is
 * kept as it came (src/store/tool-metrics-repo.ts), keyed by its series and its time window, so a
 * resent batch adds nothing; a cumulative series is read as the increments between its points.
 */
export const productivityFigures = ["lines_added", "lines_removed", "commits", "pull_requests", "edits_accepted", "edits_rejected"] as const
export type ProductivityFigure = (typeof productivityFigures)[number]

/** A data point of a known counter, attributed to one figure. */
export interface ToolMetricPoint {
  readonly tool: string
  readonly figure: ProductivityFigure
  /** Identifies the series (metric, resource and point attributes): one running total when cumulative. */
  readonly series: string
  readonly cumulative: boolean
  /** Nanoseconds since the epoch, as decimal strings (beyond a double's exact range). */
  readonly startNs: string
  readonly timeNs: string
  readonly value: number
  /** The tool's own identity of the user (`user.email`, the point's over the resource's): a fleet credential's attribution. */
  readonly identity?: string | undefined
}

type Attributes = ReadonlyMap<string, unknown>

/**
 * Which figure a point of each known metric is (checked against Claude Code 2.1's export: every
 * counter is a monotonic sum, delta temporality by default, cumulative when the exporter is told
 * OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=cumulative). Codex's binary names no such counter.
 * Unknown metrics are not kept.
 */
const known: Record<string, { readonly tool: string; readonly figure: (a: Attributes) => ProductivityFigure | undefined }> = {
  "claude_code.lines_of_code.count": {
    tool: "claude-code",
    figure: (a) => a.get("type") === "added" ? "lines_added" : a.get("type") === "removed" ? "lines_removed" : undefined
  },
  "claude_code.commit.count": { tool: "claude-code", figure: () => "commits" },
  "claude_code.pull_request.count": { tool: "claude-code", figure: () => "pull_requests" },
  "claude_code.code_edit_tool.decision": {
    tool: "claude-code",
    figure: (a) => a.get("decision") === "accept" ? "edits_accepted" : a.get("decision") === "reject" ? "edits_rejected" : undefined
  },
  // Gemini CLI (0.x, from its bundle): a cumulative counter by the OTel SDK's default.
  "gemini_cli.lines.changed": {
    tool: "gemini-cli",
    figure: (a) => a.get("type") === "added" ? "lines_added" : a.get("type") === "removed" ? "lines_removed" : undefined
  }
}

const asArray = (v: unknown): ReadonlyArray<Record<string, unknown>> => Array.isArray(v) ? v.filter((x) => typeof x === "object" && x !== null) : []

/** The decoded enum (a name, or its number in a hand-made body). */
const isCumulative = (temporality: unknown): boolean => temporality === "AGGREGATION_TEMPORALITY_CUMULATIVE" || temporality === 2

const nanos = (v: unknown): string | undefined => {
  const s = typeof v === "number" ? String(Math.trunc(v)) : typeof v === "string" ? v : undefined
  return s !== undefined && /^\d{1,20}$/.test(s) ? s.replace(/^0+(?=\d)/, "") : undefined
}

const valueOf = (point: Record<string, unknown>): number | undefined => {
  const v = point.asInt ?? point.asDouble
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

/** A series' identity: the metric and every attribute of its resource and point, in a stable order. */
const seriesOf = (metric: string, resource: Attributes, point: Attributes): string => {
  const sorted = (a: Attributes) => [...a.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([k, v]) => [k, String(v)])
  return createHash("sha256").update(JSON.stringify([metric, sorted(resource), sorted(point)])).digest("base64url").slice(0, 32)
}

/**
 * The points of the known counters in an ExportMetricsServiceRequest (plain form); any other
 * metric, and a point without a usable time or value, is skipped (telemetry the service does not
 * count, acknowledged like the rest).
 */
export const productivityPoints = (request: Record<string, unknown>): ReadonlyArray<ToolMetricPoint> => {
  const points: Array<ToolMetricPoint> = []
  for (const rm of asArray(request.resourceMetrics)) {
    const resource = attributesOf((rm.resource as Record<string, unknown> | undefined)?.attributes)
    for (const sm of asArray(rm.scopeMetrics)) {
      for (const metric of asArray(sm.metrics)) {
        const name = typeof metric.name === "string" ? metric.name : ""
        const kind = known[name]
        const sum = metric.sum as Record<string, unknown> | undefined
        if (kind === undefined || sum === undefined) continue
        const cumulative = isCumulative(sum.aggregationTemporality)
        for (const point of asArray(sum.dataPoints)) {
          const attributes = attributesOf(point.attributes)
          const figure = kind.figure(attributes)
          const timeNs = nanos(point.timeUnixNano)
          const value = valueOf(point)
          if (figure === undefined || timeNs === undefined || timeNs === "0" || value === undefined) continue
          const startNs = nanos(point.startTimeUnixNano) ?? "0"
          const email = attributes.get("user.email") ?? resource.get("user.email")
          const identity = typeof email === "string" ? email : undefined
          points.push({ tool: kind.tool, figure, series: seriesOf(name, resource, attributes), cumulative, startNs, timeNs, value, identity })
        }
      }
    }
  }
  return points
}
