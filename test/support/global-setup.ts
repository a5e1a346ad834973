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

const start = async () => {
  const dir = mkdtempSync(join(tmpdir(), "signal-engine-test-"))
  const [pg, broker] = await Promise.all([postgres(dir), kafka(dir)])
  return {
    adminDatabaseUrl: pg.url,
    kafkaBrokers: broker.brokers,
    stop: async () => {
      await Promise.allSettled([pg.stop(), broker.stop()])
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

interface Shared {
  users: number
  readonly started: ReturnType<typeof start>
}

// The integration and e2e tiers both name this file, and vitest runs a project's global setup
// once per project: a run of both shares one PostgreSQL and one broker, kept on globalThis
// because each project may load this module afresh.
const key = Symbol.for("signal-engine.test-services")
const registry = globalThis as { [key]?: Shared }

/** One real PostgreSQL and one real Kafka broker for the whole run, whichever tiers it holds. */
export default async function setup(project: TestProject) {
  const shared = registry[key] ??= { users: 0, started: start() }
  shared.users++
  const services = await shared.started
  project.provide("adminDatabaseUrl", services.adminDatabaseUrl)
  project.provide("kafkaBrokers", services.kafkaBrokers)
  return async () => {
    if (--shared.users > 0) return
    delete registry[key]
    await services.stop()
  }
}
