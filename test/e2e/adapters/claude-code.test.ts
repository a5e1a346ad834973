import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../support/ports.ts"
import { claudeConfigDir, claudeEnv, claudeUserSettings, interactiveClaude, runClaude } from "./claude.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * The real `claude` CLI, headless (-p), against the fake model server, with the hooks the adapter's
 * own `install claude-code` writes. The model is configured the way a user does it (`model` in
 * the user settings), a name the price database knows.
 */
const model = "claude-sonnet-4-5"
const usage = { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 }
/** Anthropic's published prices for claude-sonnet-4-5, USD per million tokens (≤ 200k input). */
const published = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
const oneCallCost = (usage.input * published.input + usage.output * published.output +
  usage.cacheRead * published.cacheRead + usage.cacheWrite * published.cacheWrite) / 1e6

const perTest = { timeout: 180_000 }

describe("the Claude Code adapter, with the real claude CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const configDir = claudeConfigDir
  const userSettings = claudeUserSettings

  /**
   * One headless prompt. `stream-json --verbose` is what the tool shows a user in its UI (the
   * hooks' system messages among it), as JSON lines; plain text is what `claude -p` prints.
   */
  const claude = (w: World, prompt: string, options: { json?: boolean; env?: Record<string, string | undefined> } = {}) =>
    run(cli("claude"), ["-p", prompt, "--allowedTools", "Bash", ...(options.json ? ["--output-format", "stream-json", "--verbose"] : [])], {
      env: claudeEnv(w, options.env),
      cwd: w.workdir,
      timeoutMs: 150_000
    })

  /** A user's settings before the adapter: their model, a permission and a hook of their own. */
  const ownSettings = {
    model,
    permissions: { deny: ["Read(./secrets/**)"] },
    hooks: { Notification: [{ hooks: [{ type: "command", command: "notify-send claude" }] }] }
  }

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(configDir(w), { recursive: true })
    writeFileSync(userSettings(w), JSON.stringify(ownSettings, null, 2))
    const installed = await w.adapter(["install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key], {
      env: { CLAUDE_CONFIG_DIR: configDir(w) }
    })
    expect(installed.code, installed.stderr).toBe(0)
    return w
  }

  const sessionWhere = (w: World, done: (s: any) => boolean, what: string) => w.sessionWhere("claude-code", done, what)

  const lines = (stdout: string): Array<any> => stdout.split("\n").filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l))

  it("install writes the hooks once, keeps the user's own settings, and uninstall takes out exactly what it added", perTest, async () => {
    const w = await setUp()
    const once = readFileSync(userSettings(w), "utf8")
    const config = JSON.parse(once)
    expect(config.model).toBe(model)
    expect(config.permissions).toEqual(ownSettings.permissions)
    expect(config.hooks.Notification).toEqual(ownSettings.hooks.Notification)
    for (const event of ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd", "PreCompact"]) {
      expect(JSON.stringify(config.hooks[event]), event).toContain(`hook claude-code ${event}`)
    }
    const again = await w.adapter(["install", "claude-code"], { env: { CLAUDE_CONFIG_DIR: configDir(w) } })
    expect(again.code, again.stderr).toBe(0)
    expect(readFileSync(userSettings(w), "utf8")).toBe(once)
    const doctor = await w.adapter(["doctor", "claude-code"], { env: { CLAUDE_CONFIG_DIR: configDir(w) } })
    expect(doctor.stdout).not.toContain("FAIL")
    expect(doctor.code, doctor.stdout).toBe(0)
    const removed = await w.adapter(["uninstall", "claude-code"], { env: { CLAUDE_CONFIG_DIR: configDir(w) } })
    expect(removed.code, removed.stderr).toBe(0)
    expect(JSON.parse(readFileSync(userSettings(w), "utf8"))).toEqual(ownSettings)

    // --project: the repository's .claude/settings.json, which the real CLI runs as well.
    const project = await w.adapter(["install", "claude-code", "--project"])
    expect(project.code, project.stderr).toBe(0)
    const projectSettings = join(w.workdir, ".claude", "settings.json")
    expect(JSON.stringify(JSON.parse(readFileSync(projectSettings, "utf8")).hooks.UserPromptSubmit)).toContain("hook claude-code UserPromptSubmit")
    expect(JSON.parse(readFileSync(userSettings(w), "utf8"))).toEqual(ownSettings)
    const ran = await claude(w, "say hello")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    const session = await sessionWhere(w, (s) => s.signals.some((x: any) => x.type === "stop"), "the project-installed hooks' session")
    expect(session.adapter).toBe("claude-code")
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "stop"]))
    const unproject = await w.adapter(["uninstall", "claude-code", "--project"])
    expect(unproject.code, unproject.stderr).toBe(0)
    // The file held nothing but our hooks: it goes with them.
    expect(existsSync(projectSettings)).toBe(false)
  })

  it("a Bash call that fails is a post-tool signal with its error (Claude Code's PostToolUseFailure)", perTest, async () => {
    const w = await setUp()
    const missing = join(w.workdir, "no-such-dir")
    w.model.script = { shell: `ls ${missing}`, finalText: "All done.", usage }
    const ran = await claude(w, "list the folder")
    expect(ran.code, ran.stderr).toBe(0)
    const session = await sessionWhere(w, (s) => s.signals.some((x: any) => x.type === "stop"), "the session's stop")
    const post = session.signals.filter((x: any) => x.type === "post-tool")
    expect(post).toHaveLength(1)
    expect(post[0].metadata).toMatchObject({ tool_name: "Bash", command: `ls ${missing}` })
    expect(post[0].metadata.error).toContain("no-such-dir")
  })

  it("with the service down the run goes on (fail open, warned), the spool drains once, and fail closed blocks", perTest, async () => {
    const w = await setUp()
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const down = `http://127.0.0.1:${await freePort()}`
    const ran = await claude(w, "create made.txt", { json: true, env: { SIGNAL_ENGINE_URL: down } })
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(made)).toBe(true)
    const shown = lines(ran.stdout)
    expect(shown.find((l) => l.type === "result")?.result).toBe("All done.")
    // What the user is shown: the tool's notice for each hook's system message.
    const notices = shown.filter((l) => l.type === "system" && typeof l.content === "string").map((l) => l.content as string)
    expect(notices.some((n) => n.includes("UserPromptSubmit") && n.includes("unreachable") && n.includes("fails open")), JSON.stringify(notices)).toBe(true)
    expect(await w.sessions("claude-code")).toEqual([])

    const spool = join(w.home, ".signal-engine", "spool")
    const spooled = readdirSync(spool).filter((f) => f.endsWith(".json"))
    const signalCount = spooled.reduce((n, f) => n + JSON.parse(readFileSync(join(spool, f), "utf8")).signals.length, 0)
    expect(spooled.length).toBeGreaterThanOrEqual(6) // SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, SessionEnd
    const copy = join(w.home, "spool-copy")
    cpSync(spool, copy, { recursive: true })

    const flushed = await w.adapter(["flush"])
    expect(flushed.code, flushed.stdout + flushed.stderr).toBe(0)
    expect(flushed.stdout).toContain(`sent ${signalCount}, rejected 0, files left 0`)
    const tokensIn = 2 * (usage.input + usage.cacheRead + usage.cacheWrite)
    const session = await sessionWhere(w, (s) => s.tokens_in === tokensIn && s.signals.length === signalCount, "the spooled signals")
    expect(session.tokens_out).toBe(2 * usage.output)
    expect(session.cost_usd).toBeCloseTo(2 * oneCallCost, 9)

    // The same spool sent again (as if the first answers had been lost): nothing counts twice.
    cpSync(copy, spool, { recursive: true })
    const again = await w.adapter(["flush"])
    expect(again.code, again.stdout + again.stderr).toBe(0)
    expect(again.stdout).toContain("files left 0")
    const after = await w.sessions("claude-code")
    expect(after).toHaveLength(1)
    expect(after[0]).toMatchObject({ tokens_in: tokensIn, tokens_out: 2 * usage.output, cost_usd: session.cost_usd })
    expect(after[0].signals).toHaveLength(signalCount)

    // Fail closed: the prompt is stopped before the model sees it, and the user is told why.
    const callsBefore = w.model.modelCalls().length
    const closed = await claude(w, "create another file", { env: { SIGNAL_ENGINE_URL: down, SIGNAL_ENGINE_FAIL_MODE: "closed" } })
    expect(closed.stdout).toContain("blocked because the adapter fails closed")
    expect(closed.stdout).not.toContain("All done.")
    expect(w.model.modelCalls()).toHaveLength(callsBefore)
  })

  it("a plain claude -p shows the person fail open, a refused key and a warn verdict on its stderr, once each", perTest, async () => {
    const w = await setUp()
    const down = `http://127.0.0.1:${await freePort()}`
    const shown = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("signal-engine: warning: "))
    const open = await runClaude(w, ["-p", "say hello"], { env: { SIGNAL_ENGINE_URL: down } })
    expect(open.code, open.stderr).toBe(0)
    expect(open.stdout).toContain("All done.")
    // Every hook of the run has the same warning: the person is told once, with what was spooled.
    expect(shown(open.stderr)).toHaveLength(1)
    expect(shown(open.stderr)[0]).toMatch(
      /signal-engine unreachable \(ECONNREFUSED\); allowed because the adapter fails open \(spooled for later: \d+ hook events?\)/
    )

    const refused = await runClaude(w, ["-p", "say hello"], { env: { SIGNAL_ENGINE_LICENSE_KEY: "lic_00000000000000000000" } })
    expect(refused.stdout).toContain("All done.")
    expect(shown(refused.stderr).join("\n")).toContain("signal-engine refused the signal: 401")

    const message = "claude-sonnet-4-5 is being phased out: prefer the newer model"
    const rule = await w.rule({
      name: "sonnet 4.5 warned",
      type: "model_filter",
      condition: { model: { in: [model] } },
      action: "warn",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, { type: "user-prompt", metadata: { model } })
    const warned = await runClaude(w, ["-p", "say hello"])
    expect(warned.stdout).toContain("All done.")
    expect(shown(warned.stderr)).toEqual([`signal-engine: warning: ${message}`])
    // stream-json shows hooks' system messages itself: the warning is not written a second time.
    const json = await runClaude(w, ["-p", "say hello", "--output-format", "stream-json", "--verbose"])
    expect(json.stdout).toContain(message)
    expect(json.stderr).not.toContain("signal-engine: warning")
  })

  it("an interactive session shows the person the fail-open warning on its screen", perTest, async () => {
    const w = await setUp()
    const claude = await interactiveClaude(w, { SIGNAL_ENGINE_URL: `http://127.0.0.1:${await freePort()}` })
    try {
      await claude.type("say hello\r", "All done.")
      // Claude Code's own notice (spaces dropped by the screen capture); the adapter writes no second one.
      expect(claude.screen()).toContain("UserPromptSubmitsays:signal-engineunreachable(ECONNREFUSED);allowedbecausetheadapterfailsopen")
      expect(claude.screen()).not.toContain("signal-engine:warning:")
    } finally {
      claude.close()
    }
  })
})
