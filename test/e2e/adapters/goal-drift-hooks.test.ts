import { afterEach, describe, expect, it } from "vitest"
import { startWorld, type World } from "./support.ts"

/**
 * A goal drift through each tool's own prompt hook, fed the payload the tool documents (a drift
 * takes three prompts in one session, which a headless run of these CLIs does not send): the
 * warning in the answer the tool shows, and `goal not-drift` answering it in that session.
 * Cursor has no CLI here at all; Claude Code's real CLI has its own test (goal-drift.test.ts).
 */
const tools = [
  {
    adapter: "codex",
    event: "UserPromptSubmit",
    payload: (session: string, cwd: string, prompt: string) => ({
      session_id: session,
      hook_event_name: "UserPromptSubmit",
      turn_id: "turn-1",
      model: "gpt-5-codex",
      cwd,
      prompt
    }),
    // The TUI shows systemMessage (an exec run gets it on Codex's stderr too).
    shown: (answer: any) => answer?.systemMessage,
    proceeds: (answer: any) => answer?.decision !== "block"
  },
  {
    adapter: "gemini-cli",
    event: "BeforeAgent",
    payload: (session: string, cwd: string, prompt: string) => ({ session_id: session, hook_event_name: "BeforeAgent", cwd, prompt }),
    shown: (answer: any) => answer?.systemMessage,
    proceeds: (answer: any) => answer?.continue !== false
  },
  {
    adapter: "copilot-cli",
    event: "userPromptSubmitted",
    payload: (session: string, cwd: string, prompt: string) => ({ sessionId: session, cwd, prompt, timestamp: Date.now() }),
    // Copilot shows no hook output of its own: the agent is told in its context.
    shown: (answer: any) => answer?.additionalContext,
    proceeds: (answer: any) => answer?.decision !== "block"
  },
  {
    adapter: "cursor",
    event: "beforeSubmitPrompt",
    payload: (session: string, cwd: string, prompt: string) => ({
      conversation_id: session,
      generation_id: "gen-1",
      hook_event_name: "beforeSubmitPrompt",
      workspace_roots: [cwd],
      model: "gpt-5",
      cursor_version: "1.7.0",
      prompt
    }),
    shown: (answer: any) => answer?.user_message,
    proceeds: (answer: any) => answer?.continue === true
  }
] as const

describe.each(tools)("a goal drift through the $adapter adapter's prompt hook", (tool) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  it("warns on the third off-goal prompt of a session, and the answer lands in that session naming its prompts", { timeout: 120_000 }, async () => {
    const w = await startWorld()
    world = w
    const env = { SIGNAL_ENGINE_URL: w.server.baseUrl, SIGNAL_ENGINE_LICENSE_KEY: w.org.license_key, SIGNAL_ENGINE_SEND_PROMPTS: "true" }
    expect((await w.adapter(["goal", "set", "Fix the login bug in the authentication service"], { env })).code).toBe(0)
    const prompt = async (text: string) => {
      const ran = await w.adapter(["hook", tool.adapter, tool.event], { input: JSON.stringify(tool.payload("drift-1", w.workdir, text)), env })
      expect(ran.code, ran.stderr).toBe(0)
      return ran.stdout.trim() === "" ? undefined : JSON.parse(ran.stdout)
    }
    const off = ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]
    // Each prompt goes on; only the third carries the warning.
    const answers = [await prompt(off[0]!), await prompt(off[1]!), await prompt(off[2]!)]
    expect(answers.map((a) => tool.proceeds(a))).toEqual([true, true, true])
    expect(answers.slice(0, 2).map((a) => tool.shown(a))).toEqual([undefined, undefined])
    const shown = tool.shown(answers[2])
    expect(shown).toContain("goal drift: the last 3 prompts look unrelated to your goal “Fix the login bug in the authentication service”")
    expect(shown).toContain("signal-engine-adapter goal not-drift")

    const answer = await w.adapter(["goal", "not-drift"], { env })
    expect(answer.code, answer.stderr).toBe(0)
    const session = await w.sessionWhere(tool.adapter, (s) => s.signals.some((x: any) => x.type === "refocus-ack"), "the answer in the drifted session")
    expect(session.signals.filter((x: any) => x.type === "user-prompt").map((x: any) => x.metadata.prompt)).toEqual(off)
    expect(session.signals.find((x: any) => x.type === "refocus-ack").metadata).toMatchObject({ on_goal: true, prompts: off })
    // The same work is the goal's from then on.
    for (const text of ["write a haiku about winter", "what is the capital of chile", "recommend some jazz albums"]) {
      const later = await prompt(text)
      expect({ proceeds: tool.proceeds(later), shown: tool.shown(later) }).toEqual({ proceeds: true, shown: undefined })
    }
  })
})
