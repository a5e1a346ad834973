import { afterEach, describe, expect, it } from "vitest"
import { blockModel, expectBlockedPromptSignal } from "./blocks.ts"
import { gemini, perTest, served, setUpGemini } from "./gemini-cli-support.ts"
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

  it("under auto routing, a model_filter block on the model that serves the prompt stops it before any request", perTest, async () => {
    const w = await setUpGemini()
    world = w
    // Which model auto serves this prompt with, from an allowed run.
    const first = await gemini(w, "say hello")
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

  for (const [how, options] of [
    ["the -m flag", { args: ["-m", "gemini-2.5-pro"] }],
    ["GEMINI_MODEL", { env: { GEMINI_MODEL: "gemini-2.5-pro" } }]
  ] as const) {
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
