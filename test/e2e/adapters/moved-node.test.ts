import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { installClaudeHooksWithNodeCopy } from "./claude.ts"
import { adapterBin, run, startWorld, type World } from "./support.ts"

/**
 * A Node upgrade or `nvm use` takes away the Node binary `install` ran with. The hooks are
 * installed here with a copy of node in a folder of its own, the copy is removed, and each hook
 * then runs as the tool runs it: the command line from the written config, through `sh -c`.
 */
const perTest = { timeout: 120_000 }
const message = "recursive deletes are forbidden by the org"

describe("hooks installed with a Node that is later removed", () => {
  let world: World | undefined
  let nodeDir: string | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
    if (nodeDir) rmSync(nodeDir, { recursive: true, force: true })
  })

  const configDir = (w: World) => join(w.home, ".claude")

  /** Installs the Claude Code hooks with a copy of node, then removes the copy; answers its path. */
  const installWithNodeCopy = async (w: World) => {
    const copy = await installClaudeHooksWithNodeCopy(w)
    nodeDir = copy.dir
    rmSync(copy.dir, { recursive: true, force: true })
    return copy.node
  }

  const commandOf = (w: World, event: string): string => JSON.parse(readFileSync(join(configDir(w), "settings.json"), "utf8")).hooks[event][0].hooks[0].command

  /** Runs the installed PreToolUse hook through sh, for a Bash call of `command`. */
  const preToolUse = (w: World, command: string, env: Record<string, string | undefined> = {}) =>
    run("/bin/sh", ["-c", commandOf(w, "PreToolUse")], {
      env: w.env({ CLAUDE_CONFIG_DIR: configDir(w), ...env }),
      cwd: w.workdir,
      input: JSON.stringify({
        session_id: "moved-node",
        hook_event_name: "PreToolUse",
        cwd: w.workdir,
        tool_name: "Bash",
        tool_input: { command },
        tool_use_id: "toolu_1"
      })
    })

  const doctor = (w: World, env: Record<string, string | undefined> = {}) =>
    w.adapter(["doctor", "claude-code"], { env: { CLAUDE_CONFIG_DIR: configDir(w), ...env } })

  it("still enforce the verdict with the node on PATH, and doctor names the removed Node and the repair", perTest, async () => {
    const w = await startWorld()
    world = w
    const gone = await installWithNodeCopy(w)
    const rule = await w.rule({
      name: "no rm -rf",
      type: "org_policy",
      condition: { blocked_commands: ["rm -rf *"] },
      action: "block",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Bash", command: "rm -rf /elsewhere" } })

    const denied = await preToolUse(w, "rm -rf build")
    expect(denied.code, denied.stderr).toBe(0)
    expect(JSON.parse(denied.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: message })

    const before = await doctor(w)
    expect(before.code).toBe(1)
    expect(before.stdout).toContain(`FAIL  Claude Code: the Node its hooks were installed with is gone (${gone}): they run with the node on PATH`)
    expect(before.stdout).toContain("run signal-engine-adapter install claude-code")

    // The repair doctor names: install again, with the node at hand.
    expect((await w.adapter(["install", "claude-code"], { env: { CLAUDE_CONFIG_DIR: configDir(w) } })).code).toBe(0)
    const after = await doctor(w)
    expect(after.stdout, after.stdout).not.toContain("FAIL")
    expect(after.code).toBe(0)
  })

  it("with no node on PATH either, fail with what broke and the repair, as the fail mode says", perTest, async () => {
    const w = await startWorld()
    world = w
    const gone = await installWithNodeCopy(w)
    const noNode = mkdtempSync(join(tmpdir(), "adapter-path-"))
    mkdirSync(join(noNode, "bin"))
    try {
      const path = { PATH: join(noNode, "bin") }
      const open = await preToolUse(w, "ls", path)
      expect(open.code).toBe(1) // a hook error the tools show and go on past
      expect(open.stderr).toContain(`signal-engine: the hook cannot run: ${gone} is gone and no node is on PATH`)
      expect(open.stderr).toContain("signal-engine-adapter install")
      const closed = await preToolUse(w, "ls", { ...path, SIGNAL_ENGINE_FAIL_MODE: "closed" })
      expect(closed.code).toBe(2) // a block in Claude Code, Codex and Gemini CLI

      const report = await doctor(w, path)
      expect(report.code).toBe(1)
      expect(report.stdout).toContain(`the Node its hooks were installed with is gone (${gone}): no node is on PATH, so they fail`)
    } finally {
      rmSync(noNode, { recursive: true, force: true })
    }
  })

  it("written with a node path of their own (before the launcher, or --command), doctor names the missing path", perTest, async () => {
    const w = await startWorld()
    world = w
    const gone = join(tmpdir(), "adapter-node-removed", "node")
    const installed = await w.adapter(["install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key, "--command",
      `${gone} ${adapterBin}`], {
      env: { CLAUDE_CONFIG_DIR: configDir(w) }
    })
    expect(installed.code).toBe(0)
    const report = await doctor(w)
    expect(report.code).toBe(1)
    expect(report.stdout).toContain(
      `FAIL  Claude Code: its hooks run ${gone}, which is gone (a Node upgrade or nvm?), so they fail: run signal-engine-adapter install claude-code`
    )
  })
})
