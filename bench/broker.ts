/** The run's own Kafka broker (infra/kafka/start.sh) on free ports in the working directory. */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "../test/support/ports.ts"
import { baseEnv, root, run } from "./processes.ts"
import { say } from "./say.ts"

export interface Broker {
  readonly brokers: string
  /** The broker JVM's pid (start.sh's kafka.pid), for its CPU; undefined if unreadable. */
  readonly pid: () => number | undefined
  readonly stop: () => Promise<void>
}

export const startBroker = async (dir: string): Promise<Broker> => {
  const env = {
    KAFKA_DATA_DIR: join(dir, "kafka"),
    KAFKA_PORT: String(await freePort()),
    KAFKA_CONTROLLER_PORT: String(await freePort())
  }
  say("starting Kafka (infra/kafka/start.sh)")
  await run("bash", [join(root, "infra", "kafka", "start.sh")], { env: { ...baseEnv, ...env } })
  return {
    brokers: `127.0.0.1:${env.KAFKA_PORT}`,
    pid: () => {
      try {
        return Number(readFileSync(join(env.KAFKA_DATA_DIR, "kafka.pid"), "utf8").trim()) || undefined
      } catch {
        return undefined
      }
    },
    stop: async () => {
      await run("bash", [join(root, "infra", "kafka", "stop.sh")], { env: { ...baseEnv, ...env } }).catch(() => undefined)
    }
  }
}
