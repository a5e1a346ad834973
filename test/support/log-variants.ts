import { randomBytes } from "node:crypto"
import { inject } from "vitest"

/**
 * The two log implementations, as service configuration. Every behavioural suite runs once per
 * entry: PgLog (no KAFKA_BROKERS) and KafkaLog on the real broker, each on a topic of its own.
 */
export const logVariants = (): ReadonlyArray<readonly [string, () => Record<string, string>]> => [
  ["PgLog", () => ({ LOG_PARTITIONS: "4" })],
  ["KafkaLog", () => {
    const id = randomBytes(4).toString("hex")
    return {
      LOG_PARTITIONS: "4",
      KAFKA_BROKERS: inject("kafkaBrokers"),
      KAFKA_TOPIC: `signals-${id}`,
      KAFKA_GROUP_ID: `signal-engine-${id}`,
      // The broker's minimum: a killed node's partitions move on within seconds.
      KAFKA_SESSION_TIMEOUT_MS: "6000"
    }
  }]
]

/**
 * The environment of a child process (a spawned server or CLI) for one variant: this process's
 * environment without any log settings of its own (CI exports KAFKA_BROKERS for the suite), plus
 * the variant's.
 */
export const childEnv = (variant: Record<string, string>): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const key of Object.keys(env)) if (key.startsWith("KAFKA_") || key === "LOG_PARTITIONS") delete env[key]
  return { ...env, ...variant }
}
