import { cpSync, existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
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
    const spooled = () =>
      readdirSync(spool).filter((f) => f.endsWith(".json")).flatMap((f) => JSON.parse(readFileSync(join(spool, f), "utf8")).signals as Array<any>)
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
