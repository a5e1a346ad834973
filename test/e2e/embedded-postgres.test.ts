import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { childEnv, logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { exited } from "../support/served.ts"
import { waitFor } from "../support/wait.ts"

const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The embedded PostgreSQL (no DATABASE_URL) lives and dies with the service that started it, on
 * every path: a clean stop, a kill -9 followed by a restart (the new process takes the orphaned
 * cluster over) and its clean stop.
 */
describe.each(logVariants())("the embedded PostgreSQL over %s", (_name, logEnv) => {
  it.each([
    ["", false],
    [", with another client connected to it throughout", true]
  ])("is stopped by the clean stop of a service restarted after a kill -9%s", { timeout: 180_000 }, async (_what, connected) => {
    const dataDir = mkdtempSync(join(tmpdir(), "se-embedded-"))
    // Traversable by the postgres user that runs the cluster when the tests run as root, so the
    // data directory stays where it was asked for.
    chmodSync(dataDir, 0o755)
    const port = await freePort()
    const pgPort = await freePort()
    const env = {
      ...logEnv(),
      DATA_DIR: dataDir,
      EMBEDDED_POSTGRES_PORT: String(pgPort),
      PORT: String(port),
      HOST: "127.0.0.1",
      DEMO_BOOTSTRAP: "true"
    }
    // An operator's session (psql, say), open across the kill and the restart.
    const other = new pg.Client({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres` })
    other.on("error", () => undefined)
    const start = () => {
      const e = childEnv(env)
      delete e.DATABASE_URL
      return spawn(process.execPath, [bin, "serve"], { env: { ...e, NODE_NO_WARNINGS: "1" }, stdio: ["ignore", "ignore", "inherit"] })
    }
    const ready = () =>
      waitFor(
        () => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0),
        (s) => s === 200,
        { timeoutMs: 120_000, what: "the service to be ready" }
      )
    /** The postmaster of the cluster, wherever its data directory was placed (see embedded-postgres.ts). */
    const postmaster = () => {
      const pidFile = join(dataDir, "postgres", "postmaster.pid")
      return existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").split("\n")[0]) : undefined
    }
    let child = start()
    try {
      await ready()
      const first = postmaster()
      expect(first).toBeTypeOf("number")
      if (connected) await other.connect()
      child.kill("SIGKILL")
      await exited(child)
      // Killed: nothing stopped its cluster.
      expect(alive(first!)).toBe(true)

      child = start()
      await ready()
      const second = postmaster()
      child.kill("SIGTERM")
      await exited(child)
      expect(second).toBeTypeOf("number")
      for (const pid of [first!, second!]) expect(alive(pid), `postgres pid ${pid} after the clean stop`).toBe(false)
    } finally {
      await other.end().catch(() => undefined)
      child.kill("SIGKILL")
      await exited(child)
      const left = postmaster()
      if (left !== undefined && alive(left)) process.kill(left, "SIGINT")
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
