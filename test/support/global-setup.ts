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
    /** The folder of docker-compose, helm and dockerfile-check, for the deployment files' tests. */
    deployToolsBin: string
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
 * A tool from one of infra/'s install scripts: the path its variable names (one you already
 * have), or the last line the script prints (it installs into a cache outside the repository,
 * once; nothing to do once the cache holds the pinned versions).
 */
const installed = async (variable: string, script: string) => {
  const given = process.env[variable]
  if (given) return given
  const { stdout } = await run("bash", [join(import.meta.dirname, "..", "..", "infra", script)], { maxBuffer: 16 * 1024 * 1024 })
  return stdout.trim().split("\n").at(-1) ?? ""
}

/** The coding tools' CLIs. */
const codingTools = () => installed("CODING_TOOLS_BIN", "coding-tools/install.sh")
/** Schemathesis (a virtualenv in the same cache). */
const schemathesis = () => installed("SCHEMATHESIS_BIN", "schemathesis/install.sh")
/**
 * docker-compose, helm and dockerfile-check (built with Go into the same cache). Without them
 * (no Go, no root for apt-get) only the deployment files' tests fail, saying so; the rest runs.
 */
const deployTools = () =>
  installed("DEPLOY_TOOLS_BIN", "deploy-tools/install.sh").catch((error: { readonly stderr?: string }) => {
    console.error(`infra/deploy-tools/install.sh failed; the deployment files' tests will fail:\n${error.stderr ?? String(error)}`)
    return ""
  })

/** One real PostgreSQL and one real Kafka broker for the whole run, the coding tools' CLIs, Schemathesis and the deployment tools. */
export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "signal-engine-test-"))
  const [pg, broker, tools, st, deploy] = await Promise.all([postgres(dir), kafka(dir), codingTools(), schemathesis(), deployTools()])
  project.provide("adminDatabaseUrl", pg.url)
  project.provide("kafkaBrokers", broker.brokers)
  project.provide("codingToolsBin", tools)
  project.provide("schemathesisBin", st)
  project.provide("deployToolsBin", deploy)
  return async () => {
    await Promise.allSettled([pg.stop(), broker.stop()])
    rmSync(dir, { recursive: true, force: true })
  }
}
