import { afterEach, describe, expect, it } from "vitest"
import { blockModel, expectBlockedPromptSignal } from "./blocks.ts"
import { installClaudeHooks, interactiveClaude, modelClaudeUses, runClaude } from "./claude.ts"
import { startWorld, type World } from "./support.ts"

/**
 * A model_filter block holds however Claude Code chose the model. No model is configured anywhere
 * (no `model` setting, no ANTHROPIC_MODEL): the most common setup, where `claude -p` tells its
 * hooks nothing of the model before the first request. The model each case blocks is the one the
 * real CLI sends its request to in that case, seen by a fake model server of its own beforehand.
 */
const usage = { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 }
const perTest = { timeout: 180_000 }

describe("the Claude Code adapter blocks a model however it was chosen", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    return w
  }

  it("a block on the built-in default model stops the first prompt of claude -p before any request", perTest, async () => {
    const w = await setUp()
    const model = await modelClaudeUses(w)
    await installClaudeHooks(w)
    const message = `${model} is not approved in this org: switch to the approved model`
    await blockModel(w, model, "no default model", message)
    const ran = await runClaude(w, ["-p", "refactor the parser"])
    expect(ran.stdout).toContain(message)
    expect(ran.stdout).not.toContain("All done.")
    // Not a model call, nor any other request: the fake model server saw nothing at all.
    expect(w.model.requests).toEqual([])
    await expectBlockedPromptSignal(w, "claude-code", model, "refactor the parser")
  })

  it("a block on the model a --model flag names (an alias) stops the prompt before any request", perTest, async () => {
    const w = await setUp()
    const model = await modelClaudeUses(w, ["--model", "sonnet"])
    expect(model).toMatch(/sonnet/)
    await installClaudeHooks(w)
    const message = `${model} is not approved in this org`
    await blockModel(w, model, "no sonnet", message)
    const ran = await runClaude(w, ["-p", "--model", "sonnet", "refactor the parser"])
    expect(ran.stdout).toContain(message)
    expect(w.model.requests).toEqual([])
    await expectBlockedPromptSignal(w, "claude-code", model, "refactor the parser")
  })

  it("a block holds for the model an ANTHROPIC_MODEL alias names, and the one a --settings flag names", perTest, async () => {
    const w = await setUp()
    const model = await modelClaudeUses(w, [], { ANTHROPIC_MODEL: "haiku" })
    expect(model).toMatch(/haiku/)
    await installClaudeHooks(w)
    const message = `${model} is not approved in this org`
    await blockModel(w, model, "no haiku", message)
    const byEnv = await runClaude(w, ["-p", "refactor the parser"], { env: { ANTHROPIC_MODEL: "haiku" } })
    expect(byEnv.stdout).toContain(message)
    const bySettings = await runClaude(w, ["-p", "--settings", JSON.stringify({ model: "haiku" }), "refactor the parser"])
    expect(bySettings.stdout).toContain(message)
    expect(w.model.requests).toEqual([])
  })

  /** One print-mode session, three inputs: a prompt, `/model <blocked>`, a prompt; the second must never reach it. */
  const switchThenPrompt = async (extraArgs: ReadonlyArray<string>) => {
    const w = await setUp()
    const before = await modelClaudeUses(w)
    const blocked = "claude-sonnet-4-5"
    expect(before).not.toBe(blocked)
    await installClaudeHooks(w)
    const message = `${blocked} is not approved in this org`
    await blockModel(w, blocked, "no sonnet 4.5", message)
    // Claude Code's stream-json input.
    const user = (content: string) => JSON.stringify({ type: "user", message: { role: "user", content } })
    const ran = await runClaude(w, ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", ...extraArgs], {
      input: [user("first task"), user(`/model ${blocked}`), user("second task")].join("\n") + "\n"
    })
    const results = ran.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).filter((l) => l.type === "result")
    expect(results.map((r) => r.result).join("\n")).toContain("All done.")
    expect(ran.stdout).toContain(message)
    // The first prompt went to the default model; the one after the switch went nowhere. (The switch
    // itself sends the new model a one-token "Hi" to check it exists, before any hook runs.)
    const prompts = w.model.modelCalls().filter((c) => JSON.stringify(c.body).includes("task"))
    expect(prompts.map((c) => (c.body as any).model)).toEqual([before])
  }

  it("after a mid-session /model switch to a blocked model the next prompt is stopped before its request", perTest, async () => {
    await switchThenPrompt([])
  })

  it("the same in a session that writes no transcript (--no-session-persistence)", perTest, async () => {
    // Nothing on disk names the switch: only Claude Code's own switch hooks do.
    await switchThenPrompt(["--no-session-persistence"])
  })

  /** Interactive claude: /model, the picker's Fable entry taken with `keys`, a prompt; it must never reach Fable. */
  const pickFableThenPrompt = async (keys: string, shown: string) => {
    const w = await setUp()
    const before = await modelClaudeUses(w)
    const fable = await modelClaudeUses(w, ["--model", "fable"])
    expect(fable).not.toBe(before)
    await installClaudeHooks(w)
    const message = `${fable} is not approved in this org`
    await blockModel(w, fable, "no fable", message)
    const claude = await interactiveClaude(w)
    try {
      await claude.type("/model", "/model")
      await claude.type("\r", "Select model")
      // The picker's third entry is Fable.
      await claude.type(`\x1b[B\x1b[B${keys}`, shown)
      await claude.type("write a poem", "write a poem")
      await claude.type("\r", "operation blocked by hook")
      expect(claude.screen()).toContain(message.replace(/\s+/g, ""))
    } finally {
      claude.close()
    }
    expect(w.model.modelCalls().filter((c) => JSON.stringify(c.body).includes("poem"))).toEqual([])
  }

  it("in an interactive session, after picking a blocked model in /model, the next prompt is stopped before its request", perTest, async () => {
    // Enter saves the pick as the default for new sessions too.
    await pickFableThenPrompt("\r", "saved as your default")
  })

  it("the same with the model picked for this session only", perTest, async () => {
    await pickFableThenPrompt("s", "for this session only")
  })
})
