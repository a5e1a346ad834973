import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { blockModel, expectBlockedPromptSignal } from "./blocks.ts"
import { gemini, perTest, served, setUpGemini, sum, usage } from "./gemini-cli-support.ts"
import type { World } from "./support.ts"

/**
 * Which model a Gemini CLI prompt goes to, as the CLI decides it: by default "auto", where the
 * CLI's router first asks a small model (a Flash-Lite classifier) which model should answer, then
 * sends the prompt there; or the model a user names by flag, variable or settings.
 */
describe("the Gemini CLI adapter, with the real gemini CLI choosing its model", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const sessionWhere = (w: World, done: (s: any) => boolean, what: string) => w.sessionWhere("gemini-cli", done, what)

  it("under auto routing, every model request is counted once, with the model that served it", perTest, async () => {
    const w = await setUpGemini()
    world = w
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const ran = await gemini(w, "create made.txt")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    expect(existsSync(made)).toBe(true)
    // The router's request, then the two of the main loop (before and after the tool ran).
    const calls = served(w)
    expect(calls.length).toBeGreaterThanOrEqual(3)
    expect(new Set(calls.map((c) => c.model)).size).toBeGreaterThanOrEqual(2)
    const tokensIn = sum(calls, (c) => c.tokensIn)
    // Signals a busy service did not answer in time wait in the spool for the next hook: the
    // session is awaited until it holds them all.
    const session = await sessionWhere(w, (s) => s.tokens_in === tokensIn && s.signals.some((x: any) => x.type === "session-end"), "the session's tokens")
    expect(session.tokens_out).toBe(sum(calls, (c) => c.tokensOut))
    // Each model's tokens on signals that name it, so each is priced as itself.
    const counted = session.signals.filter((x: any) => x.metadata.tokens_in !== undefined)
    for (const m of new Set(calls.map((c) => c.model))) {
      const own = calls.filter((c) => c.model === m)
      const signals = counted.filter((x: any) => x.metadata.model === m)
      expect(signals.reduce((n: number, x: any) => n + x.metadata.tokens_in, 0), m).toBe(sum(own, (c) => c.tokensIn))
      expect(signals.reduce((n: number, x: any) => n + (x.metadata.cache_read_tokens ?? 0), 0), m).toBe(sum(own, (c) => c.cacheRead))
    }
  })

  it("under auto routing, a model_filter block on the model that serves the prompt stops it before any request", perTest, async () => {
    const w = await setUpGemini()
    world = w
    // Which model auto serves a prompt with, from a run the adapter does not see (an adapter home
    // of its own, unconfigured), so the blocked prompt is the first auto prompt it judges.
    const first = await gemini(w, "say hello", { env: { SIGNAL_ENGINE_ADAPTER_HOME: join(w.home, "elsewhere") } })
    expect(first.code, first.stderr).toBe(0)
    const main = served(w).at(-1)!.model
    const message = `${main} is not approved in this org`
    await blockModel(w, main, "no auto main", message)
    const requests = w.model.requests.length
    const ran = await gemini(w, "refactor the parser")
    expect(ran.stderr).toContain(`Agent execution stopped: ${message}`)
    expect(ran.stdout).not.toContain("All done.")
    expect(w.model.requests.slice(requests)).toEqual([])
  })

  for (
    const [how, options] of [
      ["the -m flag", { args: ["-m", "gemini-2.5-pro"] }],
      ["GEMINI_MODEL", { env: { GEMINI_MODEL: "gemini-2.5-pro" } }]
    ] as const
  ) {
    it(`a model named by ${how} over the settings' is judged as itself before any request`, perTest, async () => {
      const w = await setUpGemini("gemini-2.5-flash")
      world = w
      const message = "gemini-2.5-pro is not approved in this org"
      await blockModel(w, "gemini-2.5-pro", "no pro", message)
      const ran = await gemini(w, "refactor the parser", options)
      expect(ran.stderr).toContain(`Agent execution stopped: ${message}`)
      expect(w.model.requests).toEqual([])
      await expectBlockedPromptSignal(w, "gemini-cli", "gemini-2.5-pro", "refactor the parser")
    })
  }
})
