import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * The real `gemini` CLI, headless (-p), against the fake model server, with the hooks the
 * adapter's own `install gemini-cli` writes. The model is set the way a user sets it (`model.name`
 * in the user settings), a name the price database knows. Gemini reports cache reads only
 * (cachedContentTokenCount, inside promptTokenCount), so the script has no cache writes.
 */
const model = "gemini-2.5-flash"
const usage = { input: 1000, output: 250, cacheRead: 4000, cacheWrite: 0 }

const perTest = { timeout: 180_000 }

describe("the Gemini CLI adapter, with the real gemini CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const userSettings = (w: World) => join(w.home, ".gemini", "settings.json")

  /** Only the fake model server is reachable: its base URL, a dummy key, telemetry off. */
  const geminiEnv = (w: World, extra: Record<string, string | undefined> = {}) =>
    w.env({
      GEMINI_API_KEY: "test-gemini-key",
      GOOGLE_GEMINI_BASE_URL: w.model.url,
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_CLI_NO_RELAUNCH: "true",
      GEMINI_TELEMETRY_ENABLED: "false",
      ...extra
    })

  /** One headless prompt, tools approved (--yolo), as `gemini -p` prints it. */
  const gemini = (w: World, prompt: string, env: Record<string, string | undefined> = {}) =>
    run(cli("gemini"), ["-p", prompt, "--yolo"], { env: geminiEnv(w, env), cwd: w.workdir, timeoutMs: 150_000 })

  /** A user's settings before the adapter: auth, model, no usage statistics or updates, a hook of their own. */
  const ownSettings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    model: { name: model },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    hooks: { Notification: [{ matcher: "*", hooks: [{ type: "command", command: "notify-send gemini" }] }] }
  }

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(join(w.home, ".gemini"), { recursive: true })
    writeFileSync(userSettings(w), JSON.stringify(ownSettings, null, 2))
    const installed = await w.adapter(["install", "gemini-cli", "--url", w.server.baseUrl, "--license-key", w.org.license_key])
    expect(installed.code, installed.stderr).toBe(0)
    return w
  }

  const sessionWhere = (w: World, done: (s: any) => boolean, what: string) => w.sessionWhere("gemini-cli", done, what)

  const events = ["SessionStart", "BeforeAgent", "BeforeModel", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]

  it("install writes the hooks once, keeps the user's own settings, and uninstall takes out exactly what it added", perTest, async () => {
    const w = await setUp()
    const once = readFileSync(userSettings(w), "utf8")
    const config = JSON.parse(once)
    const { hooks: _own, ...rest } = ownSettings
    expect(config).toMatchObject(rest)
    expect(config.hooks.Notification).toEqual(ownSettings.hooks.Notification)
    for (const event of events) expect(JSON.stringify(config.hooks[event]), event).toContain(`hook gemini-cli ${event}`)
    const again = await w.adapter(["install", "gemini-cli"])
    expect(again.code, again.stderr).toBe(0)
    expect(readFileSync(userSettings(w), "utf8")).toBe(once)
    const doctor = await w.adapter(["doctor", "gemini-cli"])
    expect(doctor.stdout).not.toContain("FAIL")
    expect(doctor.code, doctor.stdout).toBe(0)
    const removed = await w.adapter(["uninstall", "gemini-cli"])
    expect(removed.code, removed.stderr).toBe(0)
    expect(JSON.parse(readFileSync(userSettings(w), "utf8"))).toEqual(ownSettings)

    // --project: the repository's .gemini/settings.json, which the real CLI runs in a trusted folder.
    const project = await w.adapter(["install", "gemini-cli", "--project"])
    expect(project.code, project.stderr).toBe(0)
    const projectSettings = join(w.workdir, ".gemini", "settings.json")
    expect(JSON.stringify(JSON.parse(readFileSync(projectSettings, "utf8")).hooks.BeforeAgent)).toContain("hook gemini-cli BeforeAgent")
    expect(JSON.parse(readFileSync(userSettings(w), "utf8"))).toEqual(ownSettings)
    const ran = await gemini(w, "say hello")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    const session = await sessionWhere(w, (s) => s.signals.some((x: any) => x.type === "stop"), "the project-installed hooks' session")
    expect(session.adapter).toBe("gemini-cli")
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "stop"]))
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

    const spool = join(w.home, ".signal-engine", "spool")
    const spooled = readdirSync(spool).filter((f) => f.endsWith(".json"))
    const signals = spooled.flatMap((f) => JSON.parse(readFileSync(join(spool, f), "utf8")).signals as Array<any>)
    expect(signals.map((s) => s.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end"]))
    const copy = join(w.home, "spool-copy")
    cpSync(spool, copy, { recursive: true })

    // The service back, on the same database: one flush sends everything, once.
    const back = await startServer({ databaseUrl: w.server.databaseUrl })
    try {
      const sessions = () => w.sessions("gemini-cli", back)
      expect(await sessions()).toEqual([])
      const flushed = await w.adapter(["flush"], { env: { SIGNAL_ENGINE_URL: back.baseUrl } })
      expect(flushed.code, flushed.stdout + flushed.stderr).toBe(0)
      expect(flushed.stdout).toContain(`sent ${signals.length}, rejected 0, files left 0`)
      const tokensIn = 2 * (usage.input + usage.cacheRead)
      const session = await waitFor(async () => (await sessions())[0], (s) => s?.tokens_in === tokensIn && s.signals.length === signals.length, { timeoutMs: 30_000, what: "the spooled signals" })
      expect(session.tokens_out).toBe(2 * usage.output)
      expect(session.cost_usd).toBeGreaterThan(0)

      // The same spool sent again (as if the first answers had been lost): nothing counts twice.
      cpSync(copy, spool, { recursive: true })
      const again = await w.adapter(["flush"], { env: { SIGNAL_ENGINE_URL: back.baseUrl } })
      expect(again.code, again.stdout + again.stderr).toBe(0)
      expect(again.stdout).toContain("files left 0")
      const after = await sessions()
      expect(after).toHaveLength(1)
      expect(after[0]).toMatchObject({ tokens_in: tokensIn, tokens_out: 2 * usage.output, cost_usd: session.cost_usd })
      expect(after[0].signals).toHaveLength(signals.length)
    } finally {
      await back.stop()
    }

    // Fail closed: the prompt is stopped before the model sees it, and the user is told why.
    const callsBefore = w.model.modelCalls().length
    const closed = await gemini(w, "create another file", { SIGNAL_ENGINE_FAIL_MODE: "closed" })
    expect(closed.stderr).toContain("blocked because the adapter fails closed")
    expect(closed.stdout).not.toContain("All done.")
    expect(w.model.modelCalls()).toHaveLength(callsBefore)
  })
})
