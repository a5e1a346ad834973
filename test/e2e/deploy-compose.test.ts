import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, inject, it } from "vitest"
import { parse } from "yaml"
import { expectVerdictsThroughEveryNode, owners, usersWithKeys } from "../support/cluster.ts"
import { repoRoot, runTool } from "../support/deploy-tools.ts"
import { freshDatabase, startServer } from "../support/harness.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

type Env = Record<string, string | null>
interface Service {
  readonly image?: string
  readonly command?: ReadonlyArray<string>
  readonly environment?: Env
  readonly depends_on?: Record<string, { readonly condition: string }>
  readonly volumes?: ReadonlyArray<string>
}

let services: Record<string, Service>
let volumes: Record<string, unknown>
/** The engine nodes: the services that have a NODE_URL. */
let engines: Array<[string, Service]>

beforeAll(async () => {
  // As `docker compose up` reads it with nothing set: the file's own defaults.
  const out = await runTool("docker-compose", ["-f", "docker-compose.yml", "config"], {
    CLUSTER_SECRET: undefined,
    POSTGRES_PASSWORD: undefined,
    WEBHOOK_SECRET_KEY: undefined
  })
  expect(out.stderr).toBe("")
  expect(out.code).toBe(0)
  const config = parse(out.stdout)
  services = config.services
  volumes = config.volumes
  engines = Object.entries(services).filter(([, s]) => s.environment?.NODE_URL !== undefined)
})

describe("docker-compose.yml, as docker-compose config reads it", () => {
  it("runs Kafka in KRaft mode and PostgreSQL, with their data in volumes", () => {
    expect(services.kafka!.image).toMatch(/^apache\/kafka:/)
    expect(services.kafka!.environment!.KAFKA_PROCESS_ROLES).toBe("broker,controller")
    expect(services.postgres!.image).toMatch(/^postgres:/)
    for (const name of ["kafka", "postgres"]) {
      const volume = services[name]!.volumes![0]!.split(":")[0]!
      expect(Object.keys(volumes)).toContain(volume)
    }
  })

  it("has two engine nodes of one cluster: same group, log, database and secret, each with its own URL", () => {
    expect(engines.map(([name]) => name)).toEqual(["engine-1", "engine-2"])
    const [[, a], [, b]] = engines as [[string, Service], [string, Service]]
    for (const key of ["KAFKA_BROKERS", "KAFKA_TOPIC", "KAFKA_GROUP_ID", "LOG_PARTITIONS", "DATABASE_URL", "CLUSTER_SECRET"]) {
      expect(a.environment![key], key).toEqual(expect.any(String))
      expect(a.environment![key], key).toBe(b.environment![key])
    }
    expect(a.environment!.CLUSTER_SECRET!.length).toBeGreaterThanOrEqual(32)
    for (const [name, service] of engines) {
      // Each node's URL is its own address on the compose network, on the port it listens on.
      expect(service.environment!.NODE_URL).toBe(`http://${name}:${service.environment!.PORT ?? "8080"}`)
      expect(service.environment!.KAFKA_GROUP_INSTANCE_ID).toBe(name)
      // The demo org is made once, by the documented command, not by two nodes starting at once.
      expect(service.environment!.DEMO_BOOTSTRAP).toBe("false")
    }
    // The brokers are what the Kafka service advertises; the database is the PostgreSQL service's.
    expect(services.kafka!.environment!.KAFKA_ADVERTISED_LISTENERS).toBe(`PLAINTEXT://${a.environment!.KAFKA_BROKERS}`)
    const db = new URL(a.environment!.DATABASE_URL!)
    const pg = services.postgres!.environment!
    expect([db.hostname, db.username, db.password, db.pathname]).toEqual(["postgres", pg.POSTGRES_USER, pg.POSTGRES_PASSWORD, `/${pg.POSTGRES_DB}`])
  })

  it("migrates once before the nodes start", () => {
    expect(services.migrate!.command).toEqual(["migrate"])
    expect(services.migrate!.image).toBe(engines[0]![1].image)
    expect(services.migrate!.environment!.DATABASE_URL).toBe(engines[0]![1].environment!.DATABASE_URL)
    for (const [, engine] of engines) {
      expect(engine.command).toBeUndefined() // the image's own: serve
      expect(engine.depends_on!.migrate).toEqual({ condition: "service_completed_successfully" })
      expect(engine.depends_on!.kafka).toEqual({ condition: "service_healthy" })
    }
  })

  it("puts a load balancer in front of exactly the engine nodes", () => {
    const lb = services.lb!
    const mount = lb.volumes!.find((v) => v.includes(":/etc/nginx/nginx.conf"))!
    const conf = readFileSync(mount.split(":")[0]!, "utf8")
    const upstream = [...conf.matchAll(/^\s*server\s+([\w.-]+:\d+)/gm)].map((m) => m[1])
    expect(upstream).toEqual(engines.map(([name, s]) => `${name}:${s.environment!.PORT ?? "8080"}`))
  })
})

const run = promisify(execFile)

describe("the compose topology, run natively", () => {
  it("two nodes with the compose file's environment answer each signal with its verdict, whichever node gets it", { timeout: 120_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const id = randomBytes(4).toString("hex")
    // Only the addresses change: this machine's broker and database, a topic and group of the
    // test's own on the shared broker, and NODE_URL's default (the node's loopback address);
    // verdicts may wait longer than the default 2 s on a machine the suite keeps busy.
    const nativeEnv = async (env: Env): Promise<Record<string, string>> => {
      const kept = Object.entries(env).filter(([k, v]) => v !== null && k !== "NODE_URL") as Array<[string, string]>
      return {
        ...Object.fromEntries(kept),
        // Each container has the metrics port to itself; two processes on one machine cannot.
        ...(env.METRICS_PORT ? { METRICS_PORT: String(await freePort()) } : {}),
        KAFKA_BROKERS: inject("kafkaBrokers"),
        KAFKA_TOPIC: `${env.KAFKA_TOPIC}-${id}`,
        KAFKA_GROUP_ID: `${env.KAFKA_GROUP_ID}-${id}`,
        DATABASE_URL: databaseUrl,
        INGEST_WAIT: "5 seconds"
      }
    }
    const partitions = Number(engines[0]![1].environment!.LOG_PARTITIONS)
    const nodeA = await startServer({ databaseUrl, env: await nativeEnv(engines[0]![1].environment!) })
    const nodeB = await startServer({ databaseUrl, env: await nativeEnv(engines[1]![1].environment!) }).catch(async (e) => {
      await nodeA.stop()
      throw e
    })
    try {
      await waitFor(
        () => owners(databaseUrl),
        (rows) => rows.length === partitions && new Set(rows.map((r) => r.node_id)).size === 2,
        { timeoutMs: 60_000, what: "the group to split the partitions between the two nodes" }
      )
      // The README's one command (here without docker compose exec): the demo org.
      const { stdout } = await run(process.execPath, [join(repoRoot, "bin", "signal-engine.js"), "admin", "bootstrap", "--org", "demo", "--plan", "team",
        "--json"], {
        env: { ...process.env, DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1" }
      })
      const demo = JSON.parse(stdout)
      const users = await usersWithKeys(nodeA, demo, 8, "compose.test")
      await expectVerdictsThroughEveryNode([nodeA, nodeB], users.map((u) => u.key), "compose")
    } finally {
      await nodeB.stop()
      await nodeA.stop()
    }
  })
})
