/**
 * http_baseline: a bare `node:http` server (bench/baseline-server.ts) on the service's core that
 * JSON-parses the same body and answers 202, loaded as ingest is. The ceiling ingest is compared with.
 */
import { join } from "node:path"
import { freePort } from "../../test/support/ports.ts"
import type { Bench } from "../context.ts"
import type { LoadSpec } from "../loadgen.ts"
import { throughputFigures } from "../measure.ts"
import { options } from "../options.ts"
import { root, startChild, stopChild, waitHttp } from "../processes.ts"

/** Measures the baseline and returns its requests per second. */
export const httpBaseline = async (bench: Bench): Promise<number> => {
  const port = await freePort()
  const started = startChild(bench.dir, 0, "baseline-server", [join(root, "bench", "baseline-server.ts"), String(port)], {})
  await waitHttp(port, "/", "the baseline server", started)
  const spec: LoadSpec = {
    port,
    path: "/engine/v1/signals",
    keys: ["lic_00000000000000000000"],
    durationS: options.durationS,
    concurrency: options.concurrency,
    batch: 1,
    warmupS: options.warmupS
  }
  // Warmed up like the service, so the ceiling is not measured colder than what it is compared with.
  if (options.serverWarmupS > 0) await bench.load({ ...spec, durationS: options.serverWarmupS, warmupS: 0 })
  const { result, serverCpuMs } = await bench.measured(started.child.pid!, spec)
  await stopChild(started.child)
  bench.record({ scenario: "http_baseline", log: "-", figures: throughputFigures(result, serverCpuMs) })
  return result.requests / result.seconds
}
