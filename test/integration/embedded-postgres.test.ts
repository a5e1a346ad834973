import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../../src/store/embedded-postgres.ts"
import { freePort } from "../support/ports.ts"

const module = join(import.meta.dirname, "..", "..", "src", "store", "embedded-postgres.ts")

const holders: Array<ChildProcess> = []

/**
 * Another process that starts (or uses) the cluster of `dataDir` and keeps running; answers once
 * it is up, with the data directory the cluster really has (as root it may be placed elsewhere).
 */
const holder = (dataDir: string, port: number) =>
  new Promise<{ readonly child: ChildProcess; readonly dataDir: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [
      "--input-type=module",
      "-e",
      `import { startEmbeddedPostgres } from ${JSON.stringify(module)}
       const pg = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port}, ephemeral: true })
       console.log("up " + pg.dataDir)
       setInterval(() => {}, 60_000)`
    ], { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, NODE_NO_WARNINGS: "1" } })
    holders.push(child)
    let output = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      const up = /^up (.+)$/m.exec(output)
      if (up) resolve({ child, dataDir: up[1]!.trim() })
    })
    child.once("exit", (code) => reject(new Error(`the holder exited (${code})`)))
  })

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.removeAllListeners("exit")
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

const postmasterPid = (dataDir: string) => Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0])
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
const answers = async (url: string) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<{ one: number }>("SELECT 1 AS one")).rows[0]?.one
  } finally {
    await client.end()
  }
}

const root = mkdtempSync(join(tmpdir(), "se-embedded-"))
const placed: Array<string> = []
afterAll(() => {
  for (const child of holders) child.kill("SIGKILL")
  for (const dir of [root, ...placed]) rmSync(dir, { recursive: true, force: true })
})

describe("the embedded PostgreSQL", () => {
  it("a cluster another running process started is used and left running; one whose starter was killed is taken over and stops with its new owner", {
    timeout: 120_000
  }, async () => {
    const requested = join(root, "pg")
    const first = await holder(requested, await freePort())
    const dataDir = first.dataDir
    placed.push(dataDir, `${dataDir}.owner`)
    const started = postmasterPid(dataDir)

    // Its starter runs: used as it is, and left running at stop.
    const beside = await startEmbeddedPostgres({ dataDir: requested, port: await freePort(), ephemeral: true })
    expect(beside.reused).toBe(true)
    expect(await answers(beside.url)).toBe(1)
    await beside.stop()
    expect(alive(started)).toBe(true)

    // Its starter is killed: the cluster is left behind, running.
    await killed(first.child)
    expect(alive(started)).toBe(true)
    const next = await startEmbeddedPostgres({ dataDir: requested, port: await freePort(), ephemeral: true })
    expect(next.reused).toBe(false)
    expect(alive(started)).toBe(false)
    expect(await answers(next.url)).toBe(1)
    const restarted = postmasterPid(dataDir)
    await next.stop()
    expect(alive(restarted)).toBe(false)
  })
})
