import { execFile, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { migrate } from "../../src/store/database.ts"
import { migrationIds } from "../../src/store/migrations.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import { NodeServices } from "@effect/platform-node"
import { call, freshDatabase, startServer, type TestServer } from "../support/harness.ts"
import { childEnv } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"

const run = promisify(execFile)
const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

/** Runs `signal-engine ARGS` as a user would, on Node 24, against a database. */
const cli = async (databaseUrl: string, ...args: Array<string>) => {
  const { stdout } = await run(process.execPath, [bin, ...args], {
    env: { ...process.env, DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1" }
  })
  return stdout
}

/** Runs `signal-engine ARGS` and answers how it ended, whatever the exit code (PgLog: no Kafka settings). */
const attempt = (env: Record<string, string>, ...args: Array<string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...childEnv({}), NODE_NO_WARNINGS: "1", ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })

let databaseUrl: string
let server: TestServer

beforeAll(async () => {
  databaseUrl = await freshDatabase()
  server = await startServer({ databaseUrl })
})
afterAll(() => server?.stop())

describe("signal-engine admin", () => {
  it("bootstrap --json prints credentials that work", async () => {
    const out = JSON.parse(await cli(databaseUrl, "admin", "bootstrap", "--org", "cli-org", "--plan", "team", "--json"))
    expect(Object.keys(out)).toEqual(
      expect.arrayContaining(["org_id", "user_id", "team_id", "api_key_live", "api_key_test", "license_key"])
    )
    const org = await call(server, "GET", "/api/v1/org", { key: out.api_key_live })
    expect(org.body).toMatchObject({ id: out.org_id, name: "cli-org", plan: "team" })
    expect((await call(server, "GET", "/engine/v1/me", { key: out.license_key })).body.user_id).toBe(out.user_id)
  })

  it("bootstrap on a plan below team makes no live key", async () => {
    const out = JSON.parse(await cli(databaseUrl, "admin", "bootstrap", "--org", "small-org", "--plan", "developer", "--json"))
    expect(out.api_key_live).toBeNull()
    expect(out.api_key_test).toMatch(/^sek_test_/)
    expect(out.license_key_environment).toBe("test")
  })

  // Five CLI processes, each starting Node and connecting: on a loaded machine that is more than
  // the suite's default 30 s.
  it("create-user, create-api-key with scopes, create-license-key and revoke-key", { timeout: 90_000 }, async () => {
    const boot = JSON.parse(await cli(databaseUrl, "admin", "bootstrap", "--org", "keys-org", "--json"))
    const user = JSON.parse(
      await cli(databaseUrl, "admin", "create-user", "--org", "keys-org", "--email", "bo@keys.test", "--name", "Bo", "--team", boot.team_id, "--json")
    )
    expect(user).toMatchObject({ email: "bo@keys.test", team_ids: [boot.team_id] })

    const key = JSON.parse(
      await cli(databaseUrl, "admin", "create-api-key", "--org", boot.org_id, "--env", "live", "--scopes", "rules:read,events:read", "--json")
    )
    expect(key.scopes).toEqual(["rules:read", "events:read"])
    expect((await call(server, "GET", "/api/v1/org", { key: key.key })).body.code).toBe("insufficient_scope")

    const license = JSON.parse(await cli(databaseUrl, "admin", "create-license-key", "--org", "keys-org", "--user", user.id, "--env", "live", "--json"))
    expect((await call(server, "GET", "/engine/v1/me", { key: license.key })).body.user_id).toBe(user.id)

    expect(await cli(databaseUrl, "admin", "revoke-key", license.id)).toContain(`revoked ${license.id}`)
    expect((await call(server, "GET", "/engine/v1/me", { key: license.key })).status).toBe(401)
  })

  it("refuses unknown scopes and live keys on a plan without them, with a non-zero exit", { timeout: 90_000 }, async () => {
    await cli(databaseUrl, "admin", "bootstrap", "--org", "lite-org", "--plan", "lite")
    await expect(cli(databaseUrl, "admin", "create-api-key", "--org", "lite-org", "--env", "test", "--scopes", "rules:fly")).rejects.toThrow(/unknown scope/)
    await expect(cli(databaseUrl, "admin", "create-api-key", "--org", "lite-org", "--env", "live", "--scopes", "all")).rejects.toThrow(/team plan/)
  })
})

describe("migrations", () => {
  it("several nodes migrating one empty database at once all succeed, once", async () => {
    const url = await freshDatabase()
    const results = await Promise.all(
      Array.from({ length: 4 }, () => Effect.runPromise(migrate.pipe(Effect.provide(databaseFromUrl(url)), Effect.provide(NodeServices.layer), Effect.scoped)))
    )
    expect(results.filter((applied) => applied.length > 0)).toHaveLength(1)
    const rows = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly id: number }>`SELECT migration_id AS id FROM effect_sql_migrations ORDER BY 1`
      }).pipe(Effect.provide(databaseFromUrl(url)), Effect.scoped)
    )
    expect(rows.map((r) => r.id)).toEqual(migrationIds)
  })

  it("`signal-engine migrate` reports an up-to-date database", async () => {
    expect(await cli(databaseUrl, "migrate")).toContain("up to date")
  })
})

describe("health", () => {
  it("/healthz and /readyz answer without a key", async () => {
    expect((await call(server, "GET", "/healthz")).body).toEqual({ status: "ok" })
    const ready = await call(server, "GET", "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body.status).toBe("ready")
    expect(ready.body.checks.partitions.failing).toEqual([])
    expect(ready.body.checks.partitions.owned.length).toBeGreaterThan(0)
  })

  it("/readyz is 503 in the envelope when the schema is behind", async () => {
    const url = await freshDatabase()
    const node = await startServer({ databaseUrl: url })
    await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`DELETE FROM effect_sql_migrations`
      }).pipe(Effect.provide(databaseFromUrl(url)), Effect.scoped)
    )
    const res = await call(node, "GET", "/readyz")
    await node.stop()
    expect(res.status).toBe(503)
    expect(res.body).toMatchObject({ code: "not_ready", status: 503 })
  })
})

describe("help and mistyped command lines", () => {
  it("no command, `help` and `--help` print the usage and exit 0", async () => {
    for (const args of [[], ["help"], ["--help"]]) {
      const run = await attempt({}, ...args)
      expect(run, args.join(" ")).toMatchObject({ code: 0, stderr: "" })
      expect(run.stdout).toMatch(/USAGE\n  signal-engine <subcommand>/)
      expect(run.stdout).toMatch(/replay +Rebuild sessions and events/)
    }
    const replayHelp = await attempt({}, "help", "replay")
    expect(replayHelp).toMatchObject({ code: 0, stderr: "" })
    expect(replayHelp.stdout).toMatch(/signal-engine replay \[flags\][\s\S]*--partition integer/)
  })

  it("an unknown command or flag is named, with a non-zero exit", async () => {
    const command = await attempt({}, "replai")
    expect(command.code).toBe(2)
    expect(command.stderr).toContain(`Unknown subcommand "replai" for "signal-engine"`)
    expect(command.stderr).not.toContain("Help requested")
    const flag = await attempt({}, "replay", "--partitions", "3")
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("Unrecognized flag: --partitions in command signal-engine replay")
    expect(flag.stderr).not.toContain("Help requested")
  })
})

describe("the generated webhook key warning", () => {
  const warning = /WEBHOOK_SECRET_KEY is not set/g

  it("is not printed by migrate, replay, schemas or admin commands", async () => {
    // (Not the suite's database: a replay refuses while a service runs on it.)
    const url = await freshDatabase()
    for (const args of [["migrate"], ["replay"], ["schemas", "--check"], ["admin", "bootstrap", "--org", "quiet-org"]]) {
      const run = await attempt({ DATABASE_URL: url }, ...args)
      expect(run.code, args.join(" ")).toBe(0)
      expect(run.stderr, args.join(" ")).not.toMatch(warning)
    }
  })

  it("is printed once by serve", { timeout: 60_000 }, async () => {
    const url = await freshDatabase()
    const node = spawn(process.execPath, [bin, "serve"], {
      env: { ...childEnv({}), NODE_NO_WARNINGS: "1", DATABASE_URL: url, HOST: "127.0.0.1", PORT: String(await freePort()), DEMO_BOOTSTRAP: "false" }
    })
    let stdout = ""
    let stderr = ""
    node.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise((resolve) => node.once("exit", resolve))
    await new Promise<void>((resolve) =>
      node.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString()
        if (stdout.includes("listening on")) resolve()
      })
    )
    node.kill("SIGTERM")
    await exited
    expect(stderr.match(warning)).toHaveLength(1)
  })
})

describe("a port in use", () => {
  let dir: string
  const occupied: Array<Server> = []
  /** A port another process listens on. */
  const occupy = async () => {
    const port = await freePort()
    const other = createServer()
    occupied.push(other)
    await new Promise<void>((resolve) => other.listen(port, "127.0.0.1", resolve))
    return port
  }
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "signal-engine-ports-"))
    // A certificate only for TLS to be configured; the service stops before it would serve with it.
    execFileSync("openssl", [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-subj",
      "/CN=localhost"
    ], { stdio: "ignore" })
  })
  afterAll(() => {
    for (const other of occupied) other.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it("stops serve with the port and what to do, exit 1, before the database is touched", async () => {
    const port = await occupy()
    const url = await freshDatabase()
    const run = await attempt({ DATABASE_URL: url, HOST: "127.0.0.1", PORT: String(port) }, "serve")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(`signal-engine: port ${port} on 127.0.0.1 is in use (EADDRINUSE): stop the other process or set PORT`)
    // Nothing was migrated, no demo org made (its credentials are shown once).
    const tables = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT 1 FROM information_schema.tables WHERE table_schema = 'public'`
      }).pipe(Effect.provide(databaseFromUrl(url)), Effect.scoped)
    )
    expect(tables).toEqual([])
    expect(run.stdout).not.toContain("Created the demo org")
  })

  it("names the TLS redirect port and HTTP_REDIRECT_PORT when that one is taken", async () => {
    const redirect = await occupy()
    const run = await attempt({
      DATABASE_URL: databaseUrl,
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      HTTP_REDIRECT_PORT: String(redirect),
      TLS_CERT: join(dir, "cert.pem"),
      TLS_KEY: join(dir, "key.pem")
    }, "serve")
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `signal-engine: the plain-HTTP redirect port ${redirect} on 127.0.0.1 is in use (EADDRINUSE): stop the other process or set HTTP_REDIRECT_PORT`
    )
  })
})
