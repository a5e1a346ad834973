import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { call } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"
import { startWorld, type World } from "./support.ts"
import { installInto, servedCalls, tokensInOf, tools, total } from "./tools.ts"

/**
 * Two runs of a real coding tool by one user at the same time (two terminals, or parallel agents
 * in two worktrees), hooks installed by the adapter's own `install`: a session is one run of one
 * tool, so they are two sessions, each with its own signals, tokens and cost, and the totals are
 * both runs'.
 */
describe.each(tools)("parallel runs of $adapter by one user", (tool) => {
  let world: World | undefined
  const folders: Array<string> = []
  afterEach(async () => {
    await world?.stop()
    world = undefined
    for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true })
  })

  it("two concurrent runs are two sessions with their own tokens; the usage report counts both", { timeout: 300_000 }, async () => {
    const w = await startWorld({ finalText: "All done.", usage: tool.usage })
    world = w
    await installInto(w, tool)
    // Each run makes one shell call, so two model calls, in a worktree of its own.
    w.model.script = { shell: "touch made.txt", finalText: "All done.", usage: tool.usage }
    const trees = ["a", "b"].map((name) => {
      const dir = mkdtempSync(join(tmpdir(), `adapter-tree-${name}-`))
      folders.push(dir)
      return dir
    })
    const runs = await Promise.all(trees.map((cwd) => tool.run(w, "create made.txt", { cwd })))
    for (const ran of runs) {
      expect(ran.code, ran.output).toBe(0)
      expect(ran.output).toContain("All done.")
    }
    for (const cwd of trees) expect(existsSync(join(cwd, "made.txt"))).toBe(true)
    const calls = servedCalls(w, tool)
    expect(calls.length).toBeGreaterThanOrEqual(4)

    const ended = (s: any) => s.signals.some((x: any) => x.type === "session-end")
    const totalIn = total(calls, tokensInOf)
    const totalOut = total(calls, (u) => u.output)
    const sessions = await waitFor(
      () => w.sessions(tool.adapter),
      (all) => all.length >= 2 && all.every(ended) && all.reduce((n, s) => n + s.tokens_in, 0) === totalIn,
      { timeoutMs: 30_000, what: "both runs' sessions, ended, with every call's tokens" }
    )
    expect(sessions).toHaveLength(2)
    expect(new Set(sessions.map((s) => s.client_session_id)).size).toBe(2)
    for (const s of sessions) {
      for (const type of ["session-start", "user-prompt", "session-end"]) {
        expect(s.signals.filter((x: any) => x.type === type), type).toHaveLength(1)
      }
      // Both runs did the same: each session holds half of the model calls.
      expect(s.tokens_in).toBe(totalIn / 2)
      expect(s.tokens_out).toBe(totalOut / 2)
      expect(s.status).toBe("ended")
    }
    // Per-run sessions change no total.
    const report = await call(w.server, "GET", "/api/v1/usage?group_by=adapter", { key: w.apiKey })
    expect(report.status).toBe(200)
    expect(report.body.data.find((g: any) => g.key === tool.adapter)).toMatchObject({
      sessions: 2,
      tokens_in: totalIn,
      tokens_out: totalOut
    })
    expect(report.body.totals.cost_usd).toBeCloseTo(sessions[0].cost_usd + sessions[1].cost_usd, 9)
  })
})
