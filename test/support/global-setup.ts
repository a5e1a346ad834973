import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"
import { startEmbeddedPostgres } from "../../src/store/embedded-postgres.ts"
import { freePort } from "./ports.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** A PostgreSQL server the test files create their own databases on. */
    adminDatabaseUrl: string
    /** Bootstrap servers of a real Kafka broker. */
    kafkaBrokers: string
    /** The bin folder of the coding tools' real CLIs (claude, codex, gemini, copilot), for the adapters' tests. */
    codingToolsBin: string
    /** Schemathesis's `st` command, for the OpenAPI documents' fuzzing test. */
    schemathesisBin: string
  }
}

const run = promisify(execFile)
const infra = join(import.meta.dirname, "..", "..", "infra", "kafka")

/** PostgreSQL: `TEST_DATABASE_URL`, or an embedded cluster in a temporary directory. */
const postgres = async (dir: string) => {
  const given = process.env.TEST_DATABASE_URL
  if (given) return { url: given, stop: async () => {} }
  const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), ephemeral: true })
  return {
    url: pg.url,
    stop: async () => {
      await pg.stop()
      if (pg.dataDir !== join(dir, "pg")) rmSync(pg.dataDir, { recursive: true, force: true })
    }
  }
}

/** Kafka: `KAFKA_BROKERS`, or a broker started by infra/kafka/start.sh on free ports. */
const kafka = async (dir: string) => {
  const given = process.env.KAFKA_BROKERS
  if (given) return { brokers: given, stop: async () => {} }
  const env = {
    ...process.env,
    KAFKA_DATA_DIR: join(dir, "kafka"),
    KAFKA_PORT: String(await freePort()),
    KAFKA_CONTROLLER_PORT: String(await freePort())
  }
  await run("bash", [join(infra, "start.sh")], { env })
  return {
    brokers: `127.0.0.1:${env.KAFKA_PORT}`,
    stop: async () => {
      await run("bash", [join(infra, "stop.sh")], { env })
    }
  }
}

/**
 * The coding tools' CLIs: `CODING_TOOLS_BIN`, or infra/coding-tools/install.sh (a cache outside
 * the repository; nothing to do once it holds the pinned versions).
 */
const codingTools = async () => {
  const given = process.env.CODING_TOOLS_BIN
  if (given) return given
  const { stdout } = await run("bash", [join(import.meta.dirname, "..", "..", "infra", "coding-tools", "install.sh")], {
    maxBuffer: 16 * 1024 * 1024
  })
  return stdout.trim().split("\n").at(-1) ?? ""
}

/** Schemathesis: `SCHEMATHESIS_BIN`, or infra/schemathesis/install.sh (a virtualenv in the same cache). */
const schemathesis = async () => {
  const given = process.env.SCHEMATHESIS_BIN
  if (given) return given
  const { stdout } = await run("bash", [join(import.meta.dirname, "..", "..", "infra", "schemathesis", "install.sh")])
  return stdout.trim().split("\n").at(-1) ?? ""
}

/** One real PostgreSQL and one real Kafka broker for the whole run, the coding tools' CLIs and Schemathesis. */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "signal-engine-test-"))
  const [pg, broker, tools, st] = await Promise.all([postgres(dir), kafka(dir), codingTools(), schemathesis()])
  project.provide("adminDatabaseUrl", pg.url)
  project.provide("kafkaBrokers", broker.brokers)
  project.provide("codingToolsBin", tools)
  project.provide("schemathesisBin", st)
  return async () => {
    await Promise.allSettled([pg.stop(), broker.stop()])
    rmSync(dir, { recursive: true, force: true })
  }
}
