import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeScript } from "../../support/fake-model/script.ts"
import { startServer, type TestServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * The Codex CLI adapter against the real `codex` (headless: `codex exec`), with its hooks installed
 * by `signal-engine-adapter install codex`, talking to the fake model server over the OpenAI
 * Responses API. Nothing leaves the machine: the provider's base URL is the fake's, update checks,
 * analytics and feedback are off, and any other HTTP(S) request goes to a proxy on a closed port.
 */
const model = "gpt-5-codex"
const usage = { input: 1000, output: 200, cacheRead: 4000, cacheWrite: 0 }
const script = (shell?: string): FakeScript => ({ ...(shell === undefined ? {} : { shell }), finalText: "All done.", usage })

const writeCodexConfig = (world: World) => {
  const dir = join(world.home, ".codex")
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, "config.toml"), [
    `model = "${model}"`,
    `model_provider = "fake"`,
    `check_for_update_on_startup = false`,
    ``,
    `[model_providers.fake]`,
    `name = "Fake"`,
    `base_url = "${world.model.url}/v1"`,
    `wire_api = "responses"`,
    `env_key = "FAKE_OPENAI_API_KEY"`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[feedback]`,
    `enabled = false`,
    ``
  ].join("\n"))
}

const install = async (world: World, url = world.server.baseUrl) => {
  const ran = await world.adapter(["install", "codex", "--url", url, "--license-key", world.org.license_key])
  expect(ran.code, ran.stderr).toBe(0)
}

/**
 * One headless Codex run in the world's project folder, its stdout and stderr together (what the
 * user sees), through a shell pipe as in a terminal or a CI log: Node gives a child socket pairs
 * for stdio, which the adapter cannot reopen through /proc to tell an exec user a hook's message.
 */
const codex = async (world: World, prompt: string, env: Record<string, string> = {}) => {
  const ran = await run("/bin/bash", [
    "-o", "pipefail", "-c", `"$@" 2>&1 | cat`, "codex", cli("codex"),
    "exec", "--color", "never", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
    "--dangerously-bypass-approvals-and-sandbox", prompt
  ], {
    cwd: world.workdir,
    timeoutMs: 150_000,
    env: world.env({
      FAKE_OPENAI_API_KEY: "sk-fake",
      HTTPS_PROXY: "http://127.0.0.1:9",
      HTTP_PROXY: "http://127.0.0.1:9",
      NO_PROXY: "127.0.0.1,localhost",
      ...env
    })
  })
  return { ...ran, output: `${ran.stdout}\n${ran.stderr}` }
}

const spoolDir = (world: World) => join(world.home, ".signal-engine", "spool")
const spooledSignals = (world: World): Array<any> => {
  const dir = spoolDir(world)
  if (!existsSync(dir)) return []
  return readdirSync(dir).filter((f) => f.endsWith(".json")).flatMap((f) => JSON.parse(readFileSync(join(dir, f), "utf8")).signals)
}

describe("Codex CLI adapter: verdicts", () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld(script())
    writeCodexConfig(world)
    await install(world)
  })
  afterAll(() => world?.stop())

  it("a shell command an org policy blocks never runs, and the model is told why", { timeout: 180_000 }, async () => {
    const target = join(world.workdir, "touched-by-codex")
    world.model.script = script(`touch ${target}`)
    const rule = await world.rule({
      name: "No touching", type: "org_policy", action: "block",
      condition: { blocked_commands: ["touch *"] }, action_config: { message: "touch is forbidden by the org" }
    })
    await world.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Bash", command: `touch ${target}` } })
    const ran = await codex(world, "Create the file please")
    expect(ran.code, ran.output).toBe(0)
    expect(existsSync(target)).toBe(false)
    // The tool call was answered with the rule's message instead of running.
    const outputs = world.model.modelCalls().flatMap((c: any) => c.body.input ?? []).filter((i: any) => i?.type === "function_call_output")
    expect(outputs.map((o: any) => o.output).join("\n")).toContain("touch is forbidden by the org")
    expect(ran.output).toContain("touch is forbidden by the org")
    const sessions = await waitFor(() => world.sessions("codex"), (s) => s.some((x) => x.signals.some((g: any) => g.type === "stop")), { what: "the codex session" })
    const preTool = sessions.flatMap((s) => s.signals).filter((g: any) => g.type === "pre-tool")
    expect(preTool).toHaveLength(1)
    expect(preTool[0].metadata).toMatchObject({ tool_name: "Bash", command: `touch ${target}`, model })
    // Nothing ran, so no post-tool signal.
    expect(sessions.flatMap((s) => s.signals).filter((g: any) => g.type === "post-tool")).toHaveLength(0)
  })

  it("a prompt for a blocked model is stopped before the model is called, and the user sees why", { timeout: 180_000 }, async () => {
    world.model.script = script()
    const callsBefore = world.model.modelCalls().length
    const rule = await world.rule({
      name: "No gpt-5-codex", type: "model_filter", action: "block",
      condition: { model: { in: [model] } }, action_config: { message: "gpt-5-codex is not approved in this org" }
    })
    await world.ruleInForce(rule.id, { type: "user-prompt", metadata: { model } })
    const ran = await codex(world, "Refactor the parser")
    expect(world.model.modelCalls().length).toBe(callsBefore)
    expect(ran.output).toContain("signal-engine: blocked: gpt-5-codex is not approved in this org")
    expect(ran.output).toMatch(/UserPromptSubmit Blocked/)
  })
})

describe("Codex CLI adapter: usage", () => {
  let world: World
  beforeAll(async () => {
    world = await startWorld(script("echo hello"))
    writeCodexConfig(world)
    await install(world)
  })
  afterAll(() => world?.stop())

  it("a run's session has the tokens of every model call, cached ones included, priced as the service prices them", { timeout: 180_000 }, async () => {
    const ran = await codex(world, "Say hello from the shell")
    expect(ran.code, ran.output).toBe(0)
    expect(ran.output).toContain("All done.")
    const calls = world.model.modelCalls().length
    expect(calls).toBe(2) // the shell call, then the answer
    const tokensIn = calls * (usage.input + usage.cacheRead + usage.cacheWrite)
    const tokensOut = calls * usage.output
    const [session] = await waitFor(
      () => world.sessions("codex"),
      (s) => s.length === 1 && s[0].tokens_out === tokensOut && s[0].signals.some((g: any) => g.type === "session-end"),
      { what: "the codex session with its usage", timeoutMs: 20_000 }
    )
    expect(session.tokens_in).toBe(tokensIn)
    expect(session.tokens_out).toBe(tokensOut)
    const types = session.signals.map((g: any) => g.type)
    expect(types).toEqual(expect.arrayContaining(["session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end"]))
    const cacheRead = session.signals.reduce((n: number, g: any) => n + Number(g.metadata.cache_read_tokens ?? 0), 0)
    expect(cacheRead).toBe(calls * usage.cacheRead)
    expect(session.signals.find((g: any) => g.type === "post-tool").metadata).toMatchObject({ tool_name: "Bash", command: "echo hello" })
    // The same usage sent as one plain signal costs what the session cost.
    const priced = { cost_usd: await world.costOf([{ model, tokens_in: tokensIn, tokens_out: tokensOut, cache_read_tokens: calls * usage.cacheRead }]) }
    expect(session.cost_usd).toBeGreaterThan(0)
    expect(session.cost_usd).toBeCloseTo(priced.cost_usd, 9)
  })
})

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
