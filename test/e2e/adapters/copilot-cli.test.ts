import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, inject, it } from "vitest"
import { startServer, type TestServer } from "../../support/harness.ts"
import { freePort } from "../../support/ports.ts"
import { waitFor } from "../../support/wait.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * The real `copilot` CLI, headless (-p), against the fake model server as a custom provider
 * (Chat Completions), offline, with the hooks the adapter's own `install copilot-cli` writes in
 * the user's hooks folder. The model is a name the price database knows.
 */
const model = "gpt-4.1"
const usage = { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 }
const perTest = { timeout: 180_000 }

describe("the Copilot CLI adapter, with the real copilot CLI", () => {
  let world: World | undefined
  let restarted: TestServer | undefined
  afterEach(async () => {
    await restarted?.stop()
    restarted = undefined
    await world?.stop()
    world = undefined
  })

  const copilotHome = (w: World) => join(w.home, ".copilot")
  const hooksFile = (w: World) => join(copilotHome(w), "hooks", "signal-engine.json")

  /**
   * Offline (no GitHub auth, telemetry or update check), every model call to the fake. The CLI
   * unpacks its bundled package into a cache on first start: one cache beside the installed CLIs,
   * not one per temporary home.
   */
  const copilotEnv = (w: World, extra: Record<string, string | undefined> = {}) =>
    w.env({
      COPILOT_OFFLINE: "true",
      COPILOT_AUTO_UPDATE: "false",
      COPILOT_PROVIDER_BASE_URL: `${w.model.url}/v1`,
      COPILOT_PROVIDER_API_KEY: "sk-test-0000",
      COPILOT_MODEL: model,
      COPILOT_PKG_CACHE_HOME: join(inject("codingToolsBin"), "..", "..", ".copilot-package-cache"),
      ...extra
    })

  const copilot = (w: World, prompt: string, env: Record<string, string | undefined> = {}, args: ReadonlyArray<string> = []) =>
    run(cli("copilot"), ["-p", prompt, "--allow-all-tools", "--no-ask-user", ...args], { env: copilotEnv(w, env), cwd: w.workdir, timeoutMs: 150_000 })

  /**
   * The same run with its stdout and stderr each through a shell pipe, as in a terminal or a CI log
   * (Node gives a child socket pairs, which a hook cannot reopen through /proc to tell the person).
   */
  const copilotPiped = (w: World, prompt: string, env: Record<string, string | undefined> = {}) =>
    run("/bin/bash", ["-o", "pipefail", "-c", `"$@" 2> >(cat >&2) | cat`, "copilot", cli("copilot"), "-p", prompt, "--allow-all-tools", "--no-ask-user"], {
      env: copilotEnv(w, env),
      cwd: w.workdir,
      timeoutMs: 150_000
    })

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    const installed = await w.adapter(["install", "copilot-cli", "--url", w.server.baseUrl, "--license-key", w.org.license_key])
    expect(installed.code, installed.stderr).toBe(0)
    return w
  }

  const sessionsOf = (server: TestServer, w: World) => w.sessions("copilot-cli", server)
  const sessionWhere = (w: World, done: (s: any) => boolean, what: string, server: TestServer = w.server) => w.sessionWhere("copilot-cli", done, what, server)
  /** What the service charges for `calls` model calls of the fake's usage, sent by hand. */
  const referenceCost = (w: World, calls: number) =>
    w.costOf(Array.from({ length: calls }, () => ({
      model,
      tokens_in: usage.input + usage.cacheRead + usage.cacheWrite,
      tokens_out: usage.output,
      cache_read_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheWrite
    })))

  it("install writes its own hooks file once, keeps the user's other hooks, and uninstall removes the file", perTest, async () => {
    const w = await setUp()
    const own = join(copilotHome(w), "hooks", "mine.json")
    const mine = { version: 1, hooks: { sessionStart: [{ type: "command", bash: "echo mine" }] } }
    writeFileSync(own, JSON.stringify(mine))
    const once = readFileSync(hooksFile(w), "utf8")
    const config = JSON.parse(once)
    expect(config.version).toBe(1)
    for (const event of ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "postToolUseFailure", "preCompact", "agentStop", "sessionEnd"]) {
      expect(config.hooks[event], event).toHaveLength(1)
      expect(config.hooks[event][0]).toMatchObject({ type: "command", timeoutSec: 30 })
      expect(config.hooks[event][0].bash).toContain(`hook copilot-cli ${event}`)
    }
    const again = await w.adapter(["install", "copilot-cli"])
    expect(again.code, again.stderr).toBe(0)
    expect(readFileSync(hooksFile(w), "utf8")).toBe(once)
    const doctor = await w.adapter(["doctor", "copilot-cli"])
    expect(doctor.stdout).not.toContain("FAIL")
    // Copilot gives hooks no on-screen line in an interactive session: doctor says so.
    expect(doctor.stdout).toContain("note  Copilot CLI: an interactive copilot session shows a hook's warning")
    expect(doctor.code, doctor.stdout).toBe(0)

    // The installed hooks are the ones the real CLI runs.
    const ran = await copilot(w, "say hello")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    const session = await sessionWhere(w, (s) => s.signals.some((x: any) => x.type === "session-end"), "the run's session")
    expect(session.adapter).toBe("copilot-cli")
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["session-start", "user-prompt", "stop", "session-end"]))

    const removed = await w.adapter(["uninstall", "copilot-cli"])
    expect(removed.code, removed.stderr).toBe(0)
    expect(existsSync(hooksFile(w))).toBe(false)
    expect(JSON.parse(readFileSync(own, "utf8"))).toEqual(mine)

    // --project: the repository's .github/hooks/signal-engine.json, a file of ours alone.
    const project = await w.adapter(["install", "copilot-cli", "--project"])
    expect(project.code, project.stderr).toBe(0)
    const projectFile = join(w.workdir, ".github", "hooks", "signal-engine.json")
    expect(JSON.parse(readFileSync(projectFile, "utf8")).hooks.userPromptSubmitted[0].bash).toContain("hook copilot-cli userPromptSubmitted")
    expect(existsSync(hooksFile(w))).toBe(false)
    // A -p run loads a repository's hooks only in a trusted folder (--trust-folder: this run only).
    const inProject = await copilot(w, "say hello again", {}, ["--trust-folder"])
    expect(inProject.code, inProject.stderr).toBe(0)
    await waitFor(async () => (await sessionsOf(w.server, w)).length, (n) => n === 2, { what: "the project-installed hooks' session" })
    const unproject = await w.adapter(["uninstall", "copilot-cli", "--project"])
    expect(unproject.code, unproject.stderr).toBe(0)
    expect(existsSync(projectFile)).toBe(false)
  })

  it(
    "with the service down the run goes on (fail open, the agent warned), the spool drains once the service is back, and fail closed blocks",
    perTest,
    async () => {
      const w = await setUp()
      const made = join(w.workdir, "made.txt")
      w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
      const referenceUsd = await referenceCost(w, 2)
      await w.server.stop()

      const ran = await copilot(w, "create made.txt")
      expect(ran.code, ran.stderr).toBe(0)
      expect(ran.stdout).toContain("All done.")
      expect(existsSync(made)).toBe(true)
      // The warning also reaches the conversation, where the agent sees it (the person: see the stderr test).
      const asked = JSON.stringify(w.model.modelCalls()[0]?.body)
      expect(asked).toContain("signal-engine unreachable")
      expect(asked).toContain("allowed because the adapter fails open")

      const spool = join(w.home, ".signal-engine", "spool")
      const spooledSignals = () =>
        readdirSync(spool).filter((f) => f.endsWith(".json")).flatMap((f) => JSON.parse(readFileSync(join(spool, f), "utf8")).signals as Array<any>)
      const tokensIn = 2 * (usage.input + usage.cacheRead + usage.cacheWrite)
      // Copilot writes the log of its model calls as it exits, after its last hook: the usage is
      // spooled too once the adapter has read it there. Its sessionEnd hook may still be running
      // when the process exits, so the spool is awaited until it holds every kind of signal.
      const kinds = ["session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end"]
      const signals = await waitFor(
        async () => spooledSignals(),
        (all) => all.reduce((n, x) => n + Number(x.metadata?.tokens_in ?? 0), 0) === tokensIn && kinds.every((t) => all.some((x) => x.type === t)),
        {
          what: "the run's signals and usage in the spool"
        }
      )
      const types = new Set(signals.map((x) => x.type))
      for (const t of kinds) expect(types, t).toContain(t)

      restarted = await startServer({ databaseUrl: w.server.databaseUrl })
      const flushed = await w.adapter(["flush"], { env: { SIGNAL_ENGINE_URL: restarted.baseUrl } })
      expect(flushed.code, flushed.stdout + flushed.stderr).toBe(0)
      expect(flushed.stdout).toContain(`sent ${signals.length}, rejected 0, files left 0`)
      const session = await sessionWhere(w, (s) => s.tokens_in === tokensIn && s.signals.length === signals.length, "the spooled signals", restarted)
      expect(session.tokens_out).toBe(2 * usage.output)
      expect(session.cost_usd).toBeCloseTo(referenceUsd, 9)
      // Each spooled signal appears once.
      expect(new Set(session.signals.map((x: any) => x.id)).size).toBe(signals.length)
      const again = await w.adapter(["flush"], { env: { SIGNAL_ENGINE_URL: restarted.baseUrl } })
      expect(again.stdout).toContain("sent 0, rejected 0, files left 0")
      expect(await sessionsOf(restarted, w)).toHaveLength(1)

      // Fail closed, the service down again: the prompt is refused before the model sees it.
      const callsBefore = w.model.modelCalls().length
      const closed = await copilot(w, "create another file", { SIGNAL_ENGINE_URL: w.server.baseUrl, SIGNAL_ENGINE_FAIL_MODE: "closed" })
      expect(closed.stderr).toContain("blocked because the adapter fails closed")
      expect(closed.stdout).not.toContain("All done.")
      expect(w.model.modelCalls()).toHaveLength(callsBefore)
    }
  )

  it("copilot -p shows the person fail open, a refused key and a warn verdict on its stderr, once each", perTest, async () => {
    const w = await setUp()
    const shown = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("signal-engine: warning: "))
    const down = `http://127.0.0.1:${await freePort()}`
    const open = await copilotPiped(w, "say hello", { SIGNAL_ENGINE_URL: down })
    expect(open.code, open.stderr).toBe(0)
    expect(open.stdout).toContain("All done.")
    // Every hook of the run has the same warning: the person is told once, with what was spooled.
    expect(shown(open.stderr), open.stderr).toHaveLength(1)
    expect(shown(open.stderr)[0]).toMatch(
      /signal-engine unreachable \(ECONNREFUSED\); allowed because the adapter fails open \(spooled for later: \d+ hook events?\)/
    )

    const refused = await copilotPiped(w, "say hello", { SIGNAL_ENGINE_LICENSE_KEY: "lic_00000000000000000000" })
    expect(refused.stdout).toContain("All done.")
    expect(shown(refused.stderr).join("\n")).toContain("signal-engine refused the signal: 401")

    const message = "gpt-4.1 is being phased out: prefer the newer model"
    const rule = await w.rule({
      name: "gpt-4.1 warned",
      type: "model_filter",
      condition: { model: { in: [model] } },
      action: "warn",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, { type: "user-prompt", metadata: { model } })
    const warned = await copilotPiped(w, "say hello")
    expect(warned.stdout).toContain("All done.")
    expect(shown(warned.stderr)).toEqual([`signal-engine: warning: ${message}`])
  })
})
