import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeScript } from "../../support/fake-model/script.ts"
import { startServer, type TestServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { startWorld, type World } from "./support.ts"
import { drivers } from "./tools.ts"

/**
 * The Codex CLI adapter against the real `codex` (headless: `codex exec`), with its hooks installed
 * by `signal-engine-adapter install codex`, talking to the fake model server over the OpenAI
 * Responses API. Nothing leaves the machine: the provider's base URL is the fake's, update checks,
 * analytics and feedback are off, and any other HTTP(S) request goes to a proxy on a closed port.
 */
const usage = { input: 1000, output: 200, cacheRead: 4000, cacheWrite: 0 }
const script = (shell?: string): FakeScript => ({ ...(shell === undefined ? {} : { shell }), finalText: "All done.", usage })

/** The user's Codex config: the model, the fake as its provider, nothing else reached. */
const writeCodexConfig = drivers.codex.prepare

const install = async (world: World, url = world.server.baseUrl) => {
  const ran = await world.adapter(["install", "codex", "--url", url, "--license-key", world.org.license_key])
  expect(ran.code, ran.stderr).toBe(0)
}

/** One headless Codex run in the world's project folder; `output` is what the user sees. */
const codex = (world: World, prompt: string, env: Record<string, string> = {}) => drivers.codex.run(world, prompt, { env })

const spoolDir = (world: World) => join(world.home, ".signal-engine", "spool")
const spooledSignals = (world: World): Array<any> => {
  const dir = spoolDir(world)
  if (!existsSync(dir)) return []
  return readdirSync(dir).filter((f) => f.endsWith(".json")).flatMap((f) => JSON.parse(readFileSync(join(dir, f), "utf8")).signals)
}

describe("Codex CLI adapter: the service down", () => {
  let world: World
  let again: TestServer | undefined
  beforeAll(async () => {
    world = await startWorld(script("echo offline"))
    writeCodexConfig(world)
    await install(world)
  })
  afterAll(async () => {
    await again?.stop()
    await world?.stop().catch(() => {})
  })

  it("fails open with a warning, spools, and the spool is counted once when the service is back; fails closed on request", { timeout: 240_000 }, async () => {
    const databaseUrl = world.server.databaseUrl
    await world.server.stop()
    const ran = await codex(world, "Work while the service is down")
    expect(ran.code, ran.output).toBe(0)
    expect(ran.output).toContain("All done.")
    expect(ran.output).toMatch(/signal-engine: warning: signal-engine unreachable .*allowed because the adapter fails open/)
    const spooled = spooledSignals(world)
    expect(spooled.map((s) => s.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "pre-tool", "post-tool", "stop"]))
    const calls = world.model.modelCalls().length

    again = await startServer({ databaseUrl })
    const flushEnv = { SIGNAL_ENGINE_URL: again.baseUrl }
    const flushed = await world.adapter(["flush"], { env: flushEnv })
    expect(flushed.code, flushed.stdout + flushed.stderr).toBe(0)
    expect(flushed.stdout).toContain(`sent ${spooled.length}`)
    expect(spooledSignals(world)).toHaveLength(0)
    const again2 = await world.adapter(["flush"], { env: flushEnv })
    expect(again2.stdout).toContain("sent 0")
    const sessionsOf = () => world.sessions("codex", again!)
    const sessions = await waitFor(sessionsOf, (s) => s.flatMap((x) => x.signals).length >= spooled.length, { what: "the flushed signals" })
    expect(sessions.flatMap((x) => x.signals)).toHaveLength(spooled.length)
    expect(sessions.reduce((n, s) => n + s.tokens_out, 0)).toBe(calls * usage.output)

    // Fail closed: the prompt is stopped (no model call) and the user is told why.
    const closed = await codex(world, "Work again", { SIGNAL_ENGINE_URL: "http://127.0.0.1:9", SIGNAL_ENGINE_FAIL_MODE: "closed" })
    expect(world.model.modelCalls().length).toBe(calls)
    expect(closed.output).toMatch(/signal-engine: blocked: signal-engine unreachable .*blocked because the adapter fails closed/)
  })
})

describe("Codex CLI adapter: install", () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld()
  })
  afterAll(() => world?.stop())

  it("installing twice is installing once, and uninstall leaves the user's own hooks as they were", async () => {
    const codexHome = join(world.home, "codex-home")
    mkdirSync(codexHome, { recursive: true })
    const path = join(codexHome, "hooks.json")
    const own = { hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done", timeout: 5 }] }] } }
    writeFileSync(path, JSON.stringify(own, null, 2))
    const env = { CODEX_HOME: codexHome }
    const args = ["install", "codex", "--url", world.server.baseUrl, "--license-key", world.org.license_key]
    const first = await world.adapter(args, { env })
    expect(first.code).toBe(0)
    expect(first.stdout).toContain("review the hooks with /hooks")
    const once = readFileSync(path, "utf8")
    expect((await world.adapter(args, { env })).code).toBe(0)
    expect(readFileSync(path, "utf8")).toBe(once)
    const installed = JSON.parse(once)
    expect(Object.keys(installed.hooks).sort()).toEqual(["PostToolUse", "PreCompact", "PreToolUse", "SessionEnd", "SessionStart", "Stop", "UserPromptSubmit"])
    expect(installed.hooks.Stop[0]).toEqual(own.hooks.Stop[0])
    expect(installed.hooks.PreToolUse[0]).toMatchObject({ matcher: "*", hooks: [{ type: "command", timeout: 30 }] })
    expect(installed.hooks.PreToolUse[0].hooks[0].command).toMatch(/\/signal-engine-adapter hook codex PreToolUse$/)
    const doctor = await world.adapter(["doctor", "codex"], { env })
    expect(doctor.stdout).toContain(`ok    Codex CLI: hooks installed in ${path}`)
    expect((await world.adapter(["uninstall", "codex"], { env })).code).toBe(0)
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(own)
  })

  it("--project installs into the repository's .codex/hooks.json, and uninstall takes it away", async () => {
    const path = join(world.workdir, ".codex", "hooks.json")
    expect((await world.adapter(["install", "codex", "--project"])).code).toBe(0)
    expect(JSON.parse(readFileSync(path, "utf8")).hooks.UserPromptSubmit[0].hooks[0].command).toMatch(/hook codex UserPromptSubmit$/)
    expect((await world.adapter(["uninstall", "codex", "--project"])).code).toBe(0)
    expect(existsSync(path)).toBe(false)
  })
})
