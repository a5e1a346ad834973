/** hook: a coding tool's wait per hook event, the adapter process against a service over this log. */
import { randomBytes } from "node:crypto"
import type { Bench } from "../context.ts"
import { hookLatency } from "../hook-latency.ts"
import { type LogName, options } from "../options.ts"
import { say } from "../say.ts"
import { seedUsers } from "../seed.ts"
import { startService } from "../service.ts"

export const hookScenario = async (bench: Bench, log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await bench.database.newDatabase(`bench_hook_${id}`)
  const tenant = await seedUsers(url, 1)
  const service = await startService(bench, url, log, id)
  try {
    say(`hook over ${log}: ${options.hookRuns} runs per tool and event, alternating with a bare node -e 0`)
    const results = await hookLatency({
      baseUrl: `http://127.0.0.1:${service.port}`,
      licenseKey: tenant.keys[0]!,
      runs: options.hookRuns,
      say,
      ...(options.hookAdapter === undefined ? {} : { adapter: options.hookAdapter })
    })
    for (const figures of results) {
      bench.record({ scenario: "hook", log, figures: { ...figures, ...(options.hookAdapter ? { adapter: options.hookAdapter } : {}) } })
    }
  } finally {
    await service.stop()
  }
}
