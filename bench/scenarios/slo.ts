/**
 * slo: the highest rate a log sustains with verdict p99 ≤ 50 ms, open loop (as lag measures it:
 * from each request's scheduled send), found by bisection between 0 and the closed-loop maximum
 * (ingest). A rate passes when its p99 is within the bound and no send was dropped. The figure to
 * plan with: what a node takes while its answers stay quick, not what it takes at all.
 */
import { round } from "../measure.ts"
import type { Bench } from "../context.ts"
import { type LogName, options, smoke } from "../options.ts"
import { say } from "../say.ts"
import type { Tenant } from "../seed.ts"
import type { Service } from "../service.ts"
import { openLoop } from "./lag.ts"

/** The bound of the service level objective. */
const P99_BOUND_MS = 50

export const slo = async (
  bench: Bench,
  service: Service,
  tenant: Tenant,
  load: { readonly maxRate: number; readonly baselineRps: number | undefined },
  log: LogName
) => {
  let passing = 0
  let failing = load.maxRate
  const steps: Array<string> = []
  for (let step = 0; step < (smoke ? 1 : 5); step++) {
    const rate = Math.max(1, (passing + failing) / 2)
    const { result } = await bench.measured(service.pid, { ...openLoop(service, tenant, rate), warmupS: options.warmupS })
    const p99 = result.latencyMs.p99
    const ok = p99 <= P99_BOUND_MS && result.dropped === 0 && result.errors === 0
    steps.push(`${Math.round(rate)}/s: p99 ${round(p99, 1)} ms${result.dropped > 0 ? `, ${result.dropped} dropped` : ""}${ok ? "" : " ✗"}`)
    say(`slo over ${log}: ${steps[steps.length - 1]}`)
    if (ok) passing = rate
    else failing = rate
  }
  bench.record({
    scenario: "slo",
    log,
    figures: {
      p99_bound_ms: P99_BOUND_MS,
      slo_signals_per_s: Math.round(passing),
      ratio_to_http_baseline: load.baselineRps === undefined ? "n/a" : round(passing / load.baselineRps, 3),
      ratio_to_ingest: round(passing / load.maxRate, 3),
      steps: steps.join("; ")
    }
  })
}
