import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { freePort } from "../../support/ports.ts"
import { blockMarkerCommand, blockModel, expectBlockedPromptSignal, expectOneMarkerPreTool, markerMessage } from "./blocks.ts"
import { startWorld, type World } from "./support.ts"
import { installInto, servedCalls, tokensInOf, tools, total } from "./tools.ts"

/**
 * What every coding tool's adapter must do alike, run against each real CLI headless with the
 * hooks its own `install` wrote: count every model call once, priced as the service prices it;
 * stop a blocked shell command before it runs and tell the model why; stop a prompt for a blocked
 * model before any model request and tell the user why; without the service, fail open with a
 * warning the person sees, or closed with the reason. Each tool's own file keeps what only it has
 * (its config files, its events, its spool and its ways of showing a message).
 */
describe.each(tools)("the $adapter adapter's contract, with the real CLI", (tool) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage: tool.usage })
    world = w
    await installInto(w, tool)
    return w
  }

  it("a run's session has the tokens of every model call, cache included, priced as the service prices them", { timeout: 240_000 }, async () => {
    const w = await setUp()
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage: tool.usage }
    const ran = await tool.run(w, "create made.txt")
    expect(ran.code, ran.output).toBe(0)
    expect(ran.output).toContain("All done.")
    expect(existsSync(made)).toBe(true)
    const calls = servedCalls(w, tool)
    expect(calls.length).toBeGreaterThanOrEqual(2) // the shell call, then the answer
    const tokensIn = total(calls, tokensInOf)
    const session = await w.sessionWhere(
      tool.adapter,
      (s) => s.tokens_in === tokensIn && s.signals.some((x: any) => x.type === "session-end"),
      "the session with every call's tokens"
    )
    expect(session.tokens_out).toBe(total(calls, (u) => u.output))
    expect(session.model).toBe(tool.model)
    const types = session.signals.map((x: any) => x.type)
    expect(types).toEqual(expect.arrayContaining(["session-start", "user-prompt", "pre-tool", "post-tool", "stop", "session-end"]))
    expect(session.signals.find((x: any) => x.type === "post-tool").metadata).toMatchObject({ tool_name: tool.shellTool, command: `touch ${made}` })
    const counted = session.signals.filter((x: any) => x.metadata.tokens_in !== undefined)
    const sum = (field: string) => counted.reduce((n: number, x: any) => n + Number(x.metadata[field] ?? 0), 0)
    expect(sum("cache_read_tokens")).toBe(total(calls, (u) => u.cacheRead))
    expect(sum("cache_write_tokens")).toBe(total(calls, (u) => u.cacheWrite))

    // What the service charges for the same calls sent by hand.
    const reference = await w.costOf(calls.map((u) => ({
      model: tool.model,
      tokens_in: tokensInOf(u),
      tokens_out: u.output,
      cache_read_tokens: u.cacheRead,
      cache_write_tokens: u.cacheWrite
    })))
    expect(session.cost_usd).toBeGreaterThan(0)
    expect(session.cost_usd).toBeCloseTo(reference, 9)
    const price = tool.publishedPrice
    if (price !== undefined) {
      const listed = total(calls, (u) => u.input * price.input + u.output * price.output + u.cacheRead * price.cacheRead + u.cacheWrite * price.cacheWrite) /
        1e6
      expect(session.cost_usd).toBeCloseTo(listed, 9)
    }
  })

  it("a shell command an org policy blocks never runs, and the model is told the rule's message", { timeout: 240_000 }, async () => {
    const w = await setUp()
    const marker = await blockMarkerCommand(w, tool.shellTool, tool.usage)
    const ran = await tool.run(w, "create the marker file")
    expect(ran.code, ran.output).toBe(0)
    expect(existsSync(marker)).toBe(false)
    expect(ran.output).toContain("All done.")
    const calls = w.model.modelCalls()
    expect(calls.length).toBeGreaterThanOrEqual(2)
    // The call after the refused one carries the tool's result: the rule's message instead of a run.
    expect(JSON.stringify(calls.at(-1)!.body)).toContain(markerMessage)
    const session = await w.sessionWhere(tool.adapter, (s) => s.signals.some((x: any) => x.type === "session-end"), "the session's end")
    expectOneMarkerPreTool(session, tool.shellTool, marker)
    expect(session.signals.some((x: any) => x.type === "post-tool" && x.metadata.command === `touch ${marker}` && !x.metadata.error)).toBe(false)
  })

  it("a prompt for a blocked model reaches no model at all, and the user sees the rule's message", { timeout: 240_000 }, async () => {
    const w = await setUp()
    const message = `${tool.model} is not approved in this org: switch to the approved model`
    await blockModel(w, tool.model, `no ${tool.model}`, message)
    const ran = await tool.run(w, "refactor the parser")
    expect(ran.output).toContain(tool.blockedPromptShows(message))
    expect(ran.output).not.toContain("All done.")
    expect(w.model.modelCalls()).toEqual([])
    await expectBlockedPromptSignal(w, tool.adapter, tool.model, "refactor the parser")
  })
  it("without the service a headless run goes on and the person sees why; failing closed, no model is asked", { timeout: 240_000 }, async () => {
    const w = await setUp()
    const down = `http://127.0.0.1:${await freePort()}`
    const open = await tool.run(w, "say hello", { env: { SIGNAL_ENGINE_URL: down } })
    expect(open.code, open.output).toBe(0)
    expect(open.output).toContain("All done.")
    expect(open.output).toContain("signal-engine unreachable (ECONNREFUSED); allowed because the adapter fails open")
    const asked = w.model.modelCalls().length
    expect(asked).toBeGreaterThan(0)

    const closed = await tool.run(w, "say hello again", { env: { SIGNAL_ENGINE_URL: down, SIGNAL_ENGINE_FAIL_MODE: "closed" } })
    expect(closed.output).toContain("blocked because the adapter fails closed")
    expect(closed.output).not.toContain("All done.")
    expect(w.model.modelCalls()).toHaveLength(asked)
  })
})
