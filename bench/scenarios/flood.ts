/**
 * flood: one key of another org flooding (500-signal batches, a new adapter for every signal, two
 * in flight) beside normal users (one signal a request, four in flight): the normal users' latency
 * alone, beside the flood with the engine's limits as shipped, and beside it with them off.
 */
import { randomBytes } from "node:crypto"
import type { Bench } from "../context.ts"
import type { LoadSpec } from "../loadgen.ts"
import { round } from "../measure.ts"
import { type LogName, options } from "../options.ts"
import { say } from "../say.ts"
import { seedUsers } from "../seed.ts"
import { startService } from "../service.ts"

export const flood = async (bench: Bench, log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const phases = async (scale: string, withAlone: boolean) => {
    // A database per phase, as each phase's service has a topic of its own: a database refuses a
    // log other than the one it was fed from.
    const url = await bench.database.newDatabase(`bench_flood_${id}_${scale}`)
    const tenant = await seedUsers(url, options.users)
    const flooder = await seedUsers(url, 1, "flooder")
    const service = await startService(bench, url, log, `${id}-${scale}`, { ENGINE_RATE_LIMIT_SCALE: scale })
    try {
      const normal: LoadSpec = {
        port: service.port,
        path: "/engine/v1/signals",
        keys: tenant.keys,
        durationS: options.durationS,
        concurrency: 4,
        batch: 1,
        warmupS: options.warmupS
      }
      say(`flood over ${log} (limits x${scale}): normal users alone`)
      const alone = withAlone ? await bench.load(normal) : undefined
      say(`flood over ${log} (limits x${scale}): normal users beside a flooding key`)
      const [beside, flooded] = await Promise.all([
        bench.load(normal),
        bench.load({
          port: service.port,
          path: "/engine/v1/signals/batch",
          keys: flooder.keys,
          durationS: options.durationS + options.warmupS,
          concurrency: 2,
          batch: 500,
          distinctAdapters: true
        })
      ])
      return { alone, beside, flooded }
    } finally {
      await service.stop()
    }
  }
  const limited = await phases("1", true)
  const unlimited = await phases("0", false)
  const alone = limited.alone!.latencyMs
  bench.record({
    scenario: "flood",
    log,
    figures: {
      p99_alone_ms: round(alone.p99, 2),
      p99_beside_flood_ms: round(limited.beside.latencyMs.p99, 2),
      p99_ratio: round(limited.beside.latencyMs.p99 / alone.p99, 2),
      p99_beside_unlimited_flood_ms: round(unlimited.beside.latencyMs.p99, 2),
      p99_ratio_unlimited: round(unlimited.beside.latencyMs.p99 / alone.p99, 2),
      normal_errors: limited.beside.errors,
      flood_signals_taken: limited.flooded.signals,
      flood_requests_refused: limited.flooded.errorKinds["status 429 rate_limited"] ?? 0,
      unlimited_flood_signals_taken: unlimited.flooded.signals
    }
  })
}
