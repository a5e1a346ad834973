import { mkdirSync } from "node:fs"
import { afterEach, describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import { waitFor } from "../../support/wait.ts"
import { claudeConfigDir, claudeEnv } from "./claude.ts"
import { cli, startWorld, type World } from "./support.ts"

const perTest = { timeout: 300_000 }

/**
 * Goal drift where the person works: goals set from the terminal (`signal-engine-adapter goal`),
 * the drift shown by the real `claude` as the hook's warning on the prompt that completes the
 * streak, and answered from the terminal into the session it was raised in.
 */
describe("goal drift with the real claude CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  it(
    "a goal set from the terminal: three off-goal prompts in a session warn the person; answered as the goal's work, the same work is not called off again",
    perTest,
    async () => {
      const w = await startWorld({ finalText: "All done.", usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 } })
      world = w
      mkdirSync(claudeConfigDir(w), { recursive: true })
      const installed = await w.adapter(["install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key, "--send-prompts"], {
        env: { CLAUDE_CONFIG_DIR: claudeConfigDir(w) }
      })
      expect(installed.code, installed.stderr).toBe(0)

      expect((await w.adapter(["goal"])).stdout).toContain("no active goal")
      const set = await w.adapter(["goal", "set", "Fix the login bug in the authentication service"])
      expect(set.code, set.stderr).toBe(0)
      const goalId = set.stdout.trim().split(/\s+/)[0]!
      expect(goalId).toMatch(/^goal_[0-9a-f]{32}$/)
      expect((await w.adapter(["goal", "list"])).stdout.trim()).toBe(`${goalId}  Fix the login bug in the authentication service`)

      // One session, as a person works in it: three prompts that have nothing to do with the goal, sent
      // one after another into a running claude (stream-json in and out, which shows hooks' messages).
      const claude = spawn(cli("claude"), ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"], {
        env: claudeEnv(w) as NodeJS.ProcessEnv,
        cwd: w.workdir
      })
      let out = ""
      claude.stdout.on("data", (c) => (out += c))
      claude.stderr.on("data", () => undefined)
      const lines = () => out.split("\n").filter((l) => l.trim().startsWith("{")).map((l) => JSON.parse(l))
      const answers = () => lines().filter((m) => m.type === "result").length
      const warnings = () => out.split("\n").filter((l) => l.includes("goal drift"))
      const send = async (prompt: string, n: number) => {
        claude.stdin.write(`${JSON.stringify({ type: "user", message: { role: "user", content: prompt } })}\n`)
        await waitFor(async () => answers(), (k) => k >= n, { timeoutMs: 60_000, what: `answer ${n}` })
      }
      try {
        await send("write a haiku about autumn", 1)
        await send("what is the capital of peru", 2)
        expect(warnings()).toEqual([])
        await send("recommend some jazz records", 3)
        // The third completes the streak: the hook's warning, once, with the goal and how to answer.
        expect(warnings()).toHaveLength(1)
        expect(warnings()[0]).toContain(
          "goal drift: the last 3 prompts look unrelated to your goal “Fix the login bug in the authentication service” (since "
        )
        expect(warnings()[0]).toContain("Back to it: signal-engine-adapter goal refocus. It was the goal's work: signal-engine-adapter goal not-drift.")

        // The person says it was the goal's work: the answer lands in the session that drifted, after its goal-drift signal...
        const answer = await w.adapter(["goal", "not-drift"])
        expect(answer.code, answer.stderr).toBe(0)
        expect(answer.stdout).toContain("noted: that was work on \"Fix the login bug in the authentication service\"")
        const answered = await w.sessionWhere("claude-code", (s) => s.signals?.some((x: any) => x.type === "refocus-ack"), "the refocus-ack in the session")
        const types = answered.signals.map((x: any) => x.type)
        expect(types.filter((t: string) => t === "user-prompt")).toHaveLength(3)
        expect(types.indexOf("refocus-ack")).toBeGreaterThan(types.indexOf("goal-drift"))
        // Naming the drift's prompts, so that their words count as the goal's however late the answer comes.
        expect(answered.signals.find((x: any) => x.type === "refocus-ack").metadata).toMatchObject({
          on_goal: true,
          prompts: ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]
        })
        // ...and more of that work is not called off again.
        await send("write a haiku about winter", 4)
        await send("what is the capital of chile", 5)
        await send("recommend some jazz albums", 6)
        expect(warnings()).toHaveLength(1)
      } finally {
        claude.stdin.end()
        claude.kill()
      }
      // Nothing left to answer.
      expect((await w.adapter(["goal", "refocus"])).code).toBe(1)

      const completed = await w.adapter(["goal", "done"])
      expect(completed.code, completed.stderr).toBe(0)
      expect(completed.stdout).toContain(`${goalId}  completed`)
      expect((await w.adapter(["goal"])).stdout).toContain("no active goal")
    }
  )
})
