import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { freePort } from "./ports.ts"

const run = promisify(execFile)
const infra = join(import.meta.dirname, "..", "..", "infra", "kafka")

/** A Kafka broker of one test's own (the suite's is shared): stopped and started again at will, same ports and data. */
export interface OwnKafka {
  readonly brokers: string
  /** Stops the broker (SIGTERM, as an operator or an orchestrator would), keeping its data. */
  readonly stop: () => Promise<void>
  /** Starts it again; resolves once it answers. */
  readonly start: () => Promise<void>
  /** Stops it and deletes its data. */
  readonly remove: () => Promise<void>
}

/** `port`: the broker's listener (a free one by default); `advertisedPort`: where clients are sent (a proxy's). */
export const startOwnKafka = async (options: { readonly port?: number; readonly advertisedPort?: number } = {}): Promise<OwnKafka> => {
  const dir = mkdtempSync(join(tmpdir(), "se-own-kafka-"))
  const env = {
    ...process.env,
    KAFKA_DATA_DIR: dir,
    KAFKA_PORT: String(options.port ?? await freePort()),
    ...(options.advertisedPort ? { KAFKA_ADVERTISED_PORT: String(options.advertisedPort) } : {}),
    KAFKA_CONTROLLER_PORT: String(await freePort()),
    KAFKA_HEAP_OPTS: "-Xms128m -Xmx512m"
  }
  const start = async () => void (await run("bash", [join(infra, "start.sh")], { env }))
  const stop = async () => void (await run("bash", [join(infra, "stop.sh")], { env }))
  await start()
  return {
    brokers: `127.0.0.1:${options.advertisedPort ?? env.KAFKA_PORT}`,
    start,
    stop,
    remove: async () => {
      await stop().catch(() => undefined)
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
