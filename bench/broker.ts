/** The run's own Kafka broker (infra/kafka/start.sh) on free ports in the working directory. */
import { join } from "node:path"
import { freePort } from "../test/support/ports.ts"
import { baseEnv, root, run } from "./processes.ts"
import { say } from "./say.ts"

export interface Broker {
  readonly brokers: string
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
    stop: async () => {
      await run("bash", [join(root, "infra", "kafka", "stop.sh")], { env: { ...baseEnv, ...env } }).catch(() => undefined)
    }
  }
}
