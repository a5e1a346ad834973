/**
 * Where a verdict's time goes, as the service itself measures it, scraped from its METRICS_PORT
 * before and after a measured window (the difference of the two histograms is the window's):
 * each stage of `signal_engine_verdict_stage_seconds` (src/observability/metrics.ts), the ingest
 * route's whole handling (`signal_engine_http_request_duration_seconds`), and the event loop's
 * delay (prom-client's, which resets at each scrape: the later scrape's is the window's).
 */
import { round } from "./measure.ts"

export const stageNames = ["admit", "append", "fetch", "queue", "fold", "answer"] as const

/** A cumulative histogram: bucket bounds (seconds, +Inf last) and their counts. */
interface Buckets {
  readonly bounds: Array<number>
  readonly counts: Array<number>
}

/** The scraped histograms by `name{labels}` (labels as written, `le` left out), and the gauges by name. */
export interface Scrape {
  readonly histograms: ReadonlyMap<string, Buckets>
  readonly gauges: ReadonlyMap<string, number>
}

const empty: Scrape = { histograms: new Map(), gauges: new Map() }

const bucketLine = /^(\w+)_bucket\{(.*)\} (\S+)$/
const gaugeLine = /^(\w+) (\S+)$/

export const scrape = async (metricsPort: number): Promise<Scrape> => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const histograms = new Map<string, Buckets>()
  const gauges = new Map<string, number>()
  for (const line of text.split("\n")) {
    const bucket = bucketLine.exec(line)
    if (bucket !== null) {
      const labels = bucket[2]!.split(",").filter((l) => !l.startsWith("le="))
      const le = /le="([^"]+)"/.exec(bucket[2]!)?.[1] ?? "+Inf"
      const key = `${bucket[1]}{${labels.sort().join(",")}}`
      let h = histograms.get(key)
      if (h === undefined) histograms.set(key, h = { bounds: [], counts: [] })
      h.bounds.push(le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le))
      h.counts.push(Number(bucket[3]))
      continue
    }
    const gauge = gaugeLine.exec(line)
    if (gauge !== null) gauges.set(gauge[1]!, Number(gauge[2]))
  }
  return { histograms, gauges }
}

/** A scrape that does not fail the scenario: a service without figures has none to give. */
export const scrapeOrEmpty = (metricsPort: number): Promise<Scrape> => scrape(metricsPort).catch(() => empty)

/**
 * The `q` quantile (0..1) of a cumulative histogram in ms, linear within its bucket (Prometheus'
 * histogram_quantile); the last finite bound where it falls in +Inf.
 */
const quantileMs = ({ bounds, counts }: Buckets, q: number): number => {
  const rank = q * (counts[counts.length - 1] ?? 0)
  for (let i = 0; i < counts.length; i++) {
    if (counts[i]! < rank) continue
    const upper = bounds[i]!
    const lower = i === 0 ? 0 : bounds[i - 1]!
    if (!Number.isFinite(upper)) return lower * 1000
    const below = i === 0 ? 0 : counts[i - 1]!
    const inBucket = counts[i]! - below
    return (lower + (upper - lower) * (inBucket === 0 ? 1 : (rank - below) / inBucket)) * 1000
  }
  return 0
}

/** `<name>_records`, `<name>_p50_ms` and `<name>_p99_ms` of one histogram over the window. */
const windowFigures = (name: string, before: Buckets | undefined, after: Buckets | undefined): Record<string, number> => {
  if (after === undefined) return {}
  const counts = after.counts.map((c, i) => c - (before?.counts[i] ?? 0))
  const records = counts[counts.length - 1] ?? 0
  if (records === 0) return { [`${name}_records`]: 0 }
  const window = { bounds: after.bounds, counts }
  return {
    [`${name}_records`]: records,
    [`${name}_p50_ms`]: round(quantileMs(window, 0.5), 3),
    [`${name}_p99_ms`]: round(quantileMs(window, 0.99), 3)
  }
}

/**
 * The window's figures: `stage_<stage>_*` per stage, `service_request_*` (the ingest route's
 * handling, from its request to its response) and `event_loop_delay_p99_ms` and `_max_ms`.
 */
export const stageFigures = (before: Scrape, after: Scrape): Record<string, number> => {
  const figures: Record<string, number> = {}
  for (const stage of stageNames) {
    const key = `signal_engine_verdict_stage_seconds{stage="${stage}"}`
    Object.assign(figures, windowFigures(`stage_${stage}`, before.histograms.get(key), after.histograms.get(key)))
  }
  const route = `signal_engine_http_request_duration_seconds{method="POST",route="/engine/v1/signals"}`
  Object.assign(figures, windowFigures("service_request", before.histograms.get(route), after.histograms.get(route)))
  const loop = after.gauges.get("nodejs_eventloop_lag_p99_seconds")
  if (loop !== undefined) figures.event_loop_delay_p99_ms = round(loop * 1000, 2)
  const loopMax = after.gauges.get("nodejs_eventloop_lag_max_seconds")
  if (loopMax !== undefined) figures.event_loop_delay_max_ms = round(loopMax * 1000, 2)
  return figures
}
