import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { blockMarkerCommand, blockModel, expectBlockedPromptSignal, expectOneMarkerPreTool, markerMessage } from "./blocks.ts"
import { gemini, ownSettings, perTest, served, setUpGemini, sum, telemetryOutfile, usage, userSettings } from "./gemini-cli-support.ts"
import type { World } from "./support.ts"

/**
 * The real `gemini` CLI with the hooks `install gemini-cli` writes, its model set the way a user
 * sets it (`model.name` in the user settings), a name the price database knows.
 */
const model = "gemini-2.5-flash"

describe("the Gemini CLI adapter, with the real gemini CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const setUp = async () => {
    world = await setUpGemini(model)
    return world
  }

  const sessionWhere = (w: World, done: (s: any) => boolean, what: string) => w.sessionWhere("gemini-cli", done, what)

  const events = ["SessionStart", "BeforeAgent", "BeforeModel", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]

  it("install writes the hooks and a telemetry file once, keeps the user's own settings, and uninstall takes out exactly what it added", perTest, async () => {
    const w = await setUp()
    const own = ownSettings(model)
    const once = readFileSync(userSettings(w), "utf8")
    const config = JSON.parse(once)
    const { hooks: _own, telemetry: _off, ...rest } = own
    expect(config).toMatchObject(rest)
    expect(config.telemetry).toEqual({ enabled: true, target: "local", outfile: telemetryOutfile(w), logPrompts: false })
    expect(config.hooks.Notification).toEqual(own.hooks.Notification)
    for (const event of events) expect(JSON.stringify(config.hooks[event]), event).toContain(`hook gemini-cli ${event}`)
    const again = await w.adapter(["install", "gemini-cli"])
    expect(again.code, again.stderr).toBe(0)
    expect(readFileSync(userSettings(w), "utf8")).toBe(once)
    const doctor = await w.adapter(["doctor", "gemini-cli"])
    expect(doctor.stdout).not.toContain("FAIL")
    expect(doctor.code, doctor.stdout).toBe(0)
    const removed = await w.adapter(["uninstall", "gemini-cli"])
    expect(removed.code, removed.stderr).toBe(0)
    expect(JSON.parse(readFileSync(userSettings(w), "utf8"))).toEqual(own)

    // --project: the repository's .gemini/settings.json, which the real CLI runs in a trusted
    // folder; it names no one's home, so no telemetry file (the main loop's calls still count).
    const project = await w.adapter(["install", "gemini-cli", "--project"])
    expect(project.code, project.stderr).toBe(0)
    const projectSettings = join(w.workdir, ".gemini", "settings.json")
    const projectConfig = JSON.parse(readFileSync(projectSettings, "utf8"))
    expect(JSON.stringify(projectConfig.hooks.BeforeAgent)).toContain("hook gemini-cli BeforeAgent")
    expect(projectConfig.telemetry).toBeUndefined()
    expect(JSON.parse(readFileSync(userSettings(w), "utf8"))).toEqual(own)
    const ran = await gemini(w, "say hello")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    const calls = served(w)
    const session = await sessionWhere(w, (s) => s.signals.some((x: any) => x.type === "session-end"), "the project-installed hooks' session")
    expect(session.adapter).toBe("gemini-cli")
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "stop"]))
    expect(session.tokens_in).toBe(sum(calls, (c) => c.tokensIn))
    const unproject = await w.adapter(["uninstall", "gemini-cli", "--project"])
    expect(unproject.code, unproject.stderr).toBe(0)
    expect(existsSync(projectSettings)).toBe(false)
  })

  it("a prompt under a model_filter block never reaches the model, and the user sees the rule's message", perTest, async () => {
    const w = await setUp()
    const message = "gemini-2.5-flash is not approved in this org: use the approved model"
    await blockModel(w, model, "no flash", message)
    const ran = await gemini(w, "refactor the parser")
    expect(ran.stderr).toContain(`Agent execution stopped: ${message}`)
    expect(ran.stdout).not.toContain("All done.")
    expect(w.model.modelCalls()).toEqual([])
    await expectBlockedPromptSignal(w, "gemini-cli", model, "refactor the parser")
  })

  it("a shell call under an org_policy blocked_commands block never runs, and the model is told why", perTest, async () => {
    const w = await setUp()
    const marker = await blockMarkerCommand(w, "run_shell_command", usage)
    const message = markerMessage
    const ran = await gemini(w, "create the marker file")
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(marker)).toBe(false)
    const calls = w.model.modelCalls()
    expect(calls).toHaveLength(2)
    const contents = (calls[1]!.body as any).contents as Array<any>
    const responses = contents.flatMap((c) => c.parts ?? []).filter((p: any) => p.functionResponse)
    expect(responses).toHaveLength(1)
    expect(JSON.stringify(responses[0].functionResponse.response)).toContain(message)
    expect(ran.stdout).toContain("All done.")
    const session = await sessionWhere(w, (s) => s.signals.some((x: any) => x.type === "stop"), "the session's stop")
    expectOneMarkerPreTool(session, "run_shell_command", marker)
    expect(session.signals.some((x: any) => x.type === "post-tool" && x.metadata.command === `touch ${marker}` && !x.metadata.error)).toBe(false)
  })

  it("a normal run's session has the fake's tokens and cost over its two model calls, cache reads included", perTest, async () => {
    const w = await setUp()
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const ran = await gemini(w, "create made.txt")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    expect(existsSync(made)).toBe(true)
    const calls = served(w)
    expect(calls.map((c) => c.model)).toEqual([model, model])
    const tokensIn = sum(calls, (c) => c.tokensIn)
    const session = await sessionWhere(w, (s) => s.tokens_in === tokensIn && s.signals.some((x: any) => x.type === "session-end"), "the session's tokens")
    expect(session.adapter).toBe("gemini-cli")
    expect(session.tokens_out).toBe(sum(calls, (c) => c.tokensOut))
    const types = session.signals.map((x: any) => x.type)
    expect(types).toEqual(expect.arrayContaining(["session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end"]))
    const post = session.signals.find((x: any) => x.type === "post-tool")
    expect(post.metadata).toMatchObject({ tool_name: "run_shell_command", command: `touch ${made}` })
    const counted = session.signals.filter((x: any) => x.metadata.tokens_in !== undefined)
    expect(counted.reduce((n: number, x: any) => n + x.metadata.cache_read_tokens, 0)).toBe(2 * usage.cacheRead)
    expect(counted.every((x: any) => x.metadata.model === model)).toBe(true)

    // What the service charges for the same two calls sent by hand; the same tokens without the
    // cache reads named cost more (cache reads are priced as such).
    const byHand = (cached: boolean) => calls.map((c) => ({ model, tokens_in: c.tokensIn, tokens_out: c.tokensOut, ...(cached ? { cache_read_tokens: c.cacheRead } : {}) }))
    const cached = { cost_usd: await w.costOf(byHand(true)) }
    const uncached = { cost_usd: await w.costOf(byHand(false)) }
    expect(session.cost_usd).toBeGreaterThan(0)
    expect(session.cost_usd).toBeCloseTo(cached.cost_usd, 9)
    expect(session.cost_usd).toBeLessThan(uncached.cost_usd)
  })

  it("with the service down the run goes on (fail open, warned), the spool drains once, and fail closed blocks", perTest, async () => {
    const w = await setUp()
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    await w.server.stop()
    const ran = await gemini(w, "create made.txt")
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(made)).toBe(true)
    expect(ran.stdout).toContain("All done.")
    // Headless, the CLI prints each hook's systemMessage on stderr.
    expect(ran.stderr).toContain("Hook system message: signal-engine: signal-engine unreachable (ECONNREFUSED); allowed because the adapter fails open")
    expect(ran.stderr).not.toContain("failed for event")

    // The session's end is spooled by the adapter once the CLI has exited and its last calls are counted.
    const spool = join(w.home, ".signal-engine", "spool")
    const spooled = () => readdirSync(spool).filter((f) => f.endsWith(".json")).flatMap((f) => JSON.parse(readFileSync(join(spool, f), "utf8")).signals as Array<any>)
    const signals = await waitFor(async () => spooled(), (s) => s.some((x) => x.type === "session-end"), { what: "the spooled session end" })
    expect(signals.map((s) => s.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end"]))
    const copy = join(w.home, "spool-copy")
    cpSync(spool, copy, { recursive: true })

    // The service back, on the same database: one flush sends everything, once.
    const calls = served(w)
    const tokensIn = sum(calls, (c) => c.tokensIn)
    const tokensOut = sum(calls, (c) => c.tokensOut)
    const back = await startServer({ databaseUrl: w.server.databaseUrl })
    try {
      const sessions = () => w.sessions("gemini-cli", back)
      expect(await sessions()).toEqual([])
      const flushed = await w.adapter(["flush"], { env: { SIGNAL_ENGINE_URL: back.baseUrl } })
      expect(flushed.code, flushed.stdout + flushed.stderr).toBe(0)
      expect(flushed.stdout).toContain(`sent ${signals.length}, rejected 0, files left 0`)
      const session = await w.sessionWhere("gemini-cli", (s) => s.tokens_in === tokensIn && s.signals.length === signals.length, "the spooled signals", back)
      expect(session.tokens_out).toBe(tokensOut)
      expect(session.cost_usd).toBeGreaterThan(0)

      // The same spool sent again (as if the first answers had been lost): nothing counts twice.
      cpSync(copy, spool, { recursive: true })
      const again = await w.adapter(["flush"], { env: { SIGNAL_ENGINE_URL: back.baseUrl } })
      expect(again.code, again.stdout + again.stderr).toBe(0)
      expect(again.stdout).toContain("files left 0")
      const after = await sessions()
      expect(after).toHaveLength(1)
      expect(after[0]).toMatchObject({ tokens_in: tokensIn, tokens_out: tokensOut, cost_usd: session.cost_usd })
      expect(after[0].signals).toHaveLength(signals.length)
    } finally {
      await back.stop()
    }

    // Fail closed: the prompt is stopped before the model sees it, and the user is told why.
    const requestsBefore = w.model.requests.length
    const closed = await gemini(w, "create another file", { env: { SIGNAL_ENGINE_FAIL_MODE: "closed" } })
    expect(closed.stderr).toContain("blocked because the adapter fails closed")
    expect(closed.stdout).not.toContain("All done.")
    expect(w.model.requests).toHaveLength(requestsBefore)
  })
})
