/**
 * The service under test: `node bin/signal-engine.js serve` as a child on core 0, over one log,
 * with the engine's per-key limits off (the flood scenario turns them on).
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "../test/support/ports.ts"
import type { Bench } from "./context.ts"
import { type LogName, options } from "./options.ts"
import { root, startChild, stopChild, waitHttp } from "./processes.ts"

export interface Service {
  readonly port: number
  /** Its Prometheus metrics' port (METRICS_PORT): the verdict's stages (bench/stages.ts). */
  readonly metricsPort: number
  readonly pid: number
  /** Its output so far (stdout and stderr), as written to its log file. */
  readonly log: () => string
  readonly stop: () => Promise<void>
}

/** The settings that put the service (or the replay command) with a topic and group of its own on the run's broker. */
export const logEnvFor = (bench: Bench, log: LogName, id: string): Record<string, string> =>
  log === "kafka"
    ? { KAFKA_BROKERS: bench.broker!.brokers, KAFKA_TOPIC: `signals-${id}`, KAFKA_GROUP_ID: `signal-engine-${id}` }
    : {}

export const startService = async (
  bench: Bench,
  url: string,
  log: LogName,
  id: string,
  extra: Record<string, string> = {},
  nodeArgs: ReadonlyArray<string> = []
): Promise<Service> => {
  const port = await freePort()
  const metricsPort = await freePort()
  const env: Record<string, string> = {
    DATABASE_URL: url,
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    HOST: "127.0.0.1",
    DEMO_BOOTSTRAP: "false",
    LOG_PARTITIONS: String(options.partitions),
    // The engine's throughput, not its per-key limits (the flood scenario turns them on).
    ENGINE_RATE_LIMIT_SCALE: "0",
    ...logEnvFor(bench, log, id),
    ...options.serviceEnv,
    ...extra
  }
  const nodeFlags = [...nodeArgs, ...bench.profiles.flags(id)]
  const started = startChild(bench.dir, 0, `service-${id}`, [...nodeFlags, join(root, "bin", "signal-engine.js"), "serve"], env)
  await waitHttp(port, "/readyz", `the service (${log})`, started)
  return {
    port,
    metricsPort,
    pid: started.child.pid!,
    log: () => readFileSync(started.logFile, "utf8"),
    stop: async () => {
      await stopChild(started.child)
      bench.profiles.collect(id)
    }
  }
}
