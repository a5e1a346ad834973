import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { type AddressInfo, connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { connectionRefused, freePort } from "../../support/ports.ts"
import { waitFor } from "../../support/wait.ts"
import { installClaudeHooksWithNodeCopy } from "./claude.ts"
import { run, startWorld, type World } from "./support.ts"

/**
 * After a hook has run, the next ones are served by the resident hook process (no Node start):
 * the same answers, the hook's own environment and folder, and Node again whenever that process
 * cannot serve. Hooks run as the tools run them: the installed command line through `sh -c`.
 */
const perTest = { timeout: 120_000 }
const message = "recursive deletes are forbidden by the org"

describe("hooks served by the resident hook process", () => {
  let world: World | undefined
  const folders: Array<string> = []
  afterEach(async () => {
    await world?.stop()
    world = undefined
    for (const f of folders.splice(0)) rmSync(f, { recursive: true, force: true })
  })

  const configDir = (w: World) => join(w.home, ".claude")
  const daemonFile = (w: World) => join(w.home, ".signal-engine", "daemon")
  const commandOf = (w: World, event: string): string => JSON.parse(readFileSync(join(configDir(w), "settings.json"), "utf8")).hooks[event][0].hooks[0].command

  /** Runs the installed PreToolUse hook through sh, for a Bash call of `command`. */
  const preToolUse = (w: World, command: string, options: { env?: Record<string, string | undefined>; cwd?: string; inputCwd?: boolean } = {}) =>
    run("/bin/sh", ["-c", commandOf(w, "PreToolUse")], {
      env: w.env({ CLAUDE_CONFIG_DIR: configDir(w), ...options.env }),
      cwd: options.cwd ?? w.workdir,
      input: JSON.stringify({
        session_id: "resident",
        hook_event_name: "PreToolUse",
        ...(options.inputCwd === false ? {} : { cwd: w.workdir }),
        tool_name: "Bash",
        tool_input: { command },
        tool_use_id: `toolu_${Math.random().toString(36).slice(2)}`
      })
    })

  /** Installs the Claude Code hooks with a copy of node of the test's own (so the test can take it away). */
  const setUp = async () => {
    const w = await startWorld()
    world = w
    const { dir: nodeDir } = await installClaudeHooksWithNodeCopy(w)
    folders.push(nodeDir)
    const rule = await w.rule({
      name: "no rm -rf",
      type: "org_policy",
      condition: { blocked_commands: ["rm -rf *"] },
      action: "block",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Bash", command: "rm -rf /elsewhere" } })
    return { w, nodeDir }
  }

  /** A PATH without any node on it. */
  const pathWithoutNode = () => {
    const dir = mkdtempSync(join(tmpdir(), "adapter-path-"))
    folders.push(dir)
    return `${dir}:/usr/bin:/bin`
  }

  const denied = (ran: { code: number | null; stdout: string; stderr: string }) => {
    expect(ran.code, ran.stderr).toBe(0)
    expect(JSON.parse(ran.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: "deny", permissionDecisionReason: message })
  }

  it("serve the next hooks once one has run: with no Node left on the machine, verdicts still hold", perTest, async () => {
    const { w, nodeDir } = await setUp()
    denied(await preToolUse(w, "rm -rf build"))
    await waitFor(async () => existsSync(daemonFile(w)), (up) => up, { what: "the resident hook process to start" })
    // Only the resident process can answer now: the Node the hooks were installed with is gone,
    // and there is no node on PATH.
    rmSync(nodeDir, { recursive: true, force: true })
    const path = { PATH: pathWithoutNode() }
    denied(await preToolUse(w, "rm -rf dist", { env: path }))
    const allowed = await preToolUse(w, "ls", { env: path })
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(allowed.stdout).not.toContain("deny")
    // The hook's own environment: a fail mode set in this shell, the service out of reach.
    const down = `http://127.0.0.1:${await freePort()}`
    const closed = await preToolUse(w, "ls", { env: { ...path, SIGNAL_ENGINE_URL: down, SIGNAL_ENGINE_FAIL_MODE: "closed" } })
    expect(closed.stdout + closed.stderr).toContain("blocked because the adapter fails closed")
    // The hook's own folder: a project named there, for an input that names no folder.
    const project = mkdtempSync(join(tmpdir(), "adapter-project-"))
    folders.push(project)
    writeFileSync(join(project, ".signal-engine.json"), JSON.stringify({ project_id: "proj_resident" }))
    denied(await preToolUse(w, "rm -rf cache", { env: path, cwd: project, inputCwd: false }))
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.metadata.command === "rm -rf cache"), "the last hook's signal")
    expect(session.signals.find((x: any) => x.metadata.command === "rm -rf cache").metadata.project_id).toBe("proj_resident")
    expect(session.signals.filter((x: any) => x.type === "pre-tool").map((x: any) => x.metadata.command).sort()).toEqual(
      ["ls", "rm -rf build", "rm -rf cache", "rm -rf dist"]
    )
  })

  it("keeps its connection to the service from one hook to the next", perTest, async () => {
    const { w } = await setUp()
    // A pass-through proxy in front of the service, counting the connections made to it.
    const service = new URL(w.server.baseUrl)
    let connections = 0
    const sockets: Array<Socket> = []
    const proxy = createServer((client) => {
      connections += 1
      const upstream = connect(Number(service.port), service.hostname)
      sockets.push(client, upstream)
      client.pipe(upstream).pipe(client)
      client.on("error", () => upstream.destroy())
      upstream.on("error", () => client.destroy())
    })
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r))
    const env = { SIGNAL_ENGINE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` }
    try {
      denied(await preToolUse(w, "rm -rf build", { env }))
      await waitFor(async () => existsSync(daemonFile(w)), (up) => up, { what: "the resident hook process to start" })
      const before = connections
      denied(await preToolUse(w, "rm -rf dist", { env }))
      for (const command of ["ls", "pwd", "git status"]) expect((await preToolUse(w, command, { env })).stdout).not.toContain("deny")
      denied(await preToolUse(w, "rm -rf cache", { env }))
      // Five hooks served by the resident process, over the one connection it opened.
      expect(connections - before).toBe(1)
    } finally {
      for (const s of sockets) s.destroy()
      proxy.close()
    }
  })

  it("a hook's pipeline ends with the hook, though the resident process it started lives on", perTest, async () => {
    const { w } = await setUp()
    // As a shell runs a tool whose stderr goes through a process substitution (an fd the tool and
    // its hooks inherit): the pipeline ends only when no process holds its pipes.
    const input = JSON.stringify({
      session_id: "piped",
      hook_event_name: "PreToolUse",
      cwd: w.workdir,
      tool_name: "Bash",
      tool_input: { command: "rm -rf x" },
      tool_use_id: "toolu_p"
    })
    const piped = await run("/bin/bash", ["-c", `sh -c "$0" 2> >(cat >&2) | cat`, commandOf(w, "PreToolUse")], {
      env: w.env({ CLAUDE_CONFIG_DIR: configDir(w) }),
      cwd: w.workdir,
      input,
      timeoutMs: 30_000
    })
    denied(piped)
    // The process the hook started (inheriting those pipes) is there, and has let them go.
    await waitFor(async () => existsSync(daemonFile(w)), (up) => up, { what: "the resident hook process to start" })
  })

  it("fall back to Node when the resident process is gone, and start another; it ends when its file goes", perTest, async () => {
    const { w } = await setUp()
    // A file naming a process that is not there (killed, or the machine restarted).
    mkdirSync(join(w.home, ".signal-engine"), { recursive: true })
    const stale = `${await freePort()} 00ff\n`
    writeFileSync(daemonFile(w), stale, { mode: 0o600 })
    denied(await preToolUse(w, "rm -rf build"))
    const fresh = await waitFor(async () => readFileSync(daemonFile(w), "utf8"), (text) => text !== stale, { what: "a new resident hook process" })
    const port = Number(fresh.split(" ")[0])
    denied(await preToolUse(w, "rm -rf dist", { env: { PATH: pathWithoutNode() } }))
    // Its file taken away (uninstalled, the home removed): it stops taking connections.
    rmSync(daemonFile(w))
    await waitFor(() => connectionRefused(port), (gone) => gone, { timeoutMs: 10_000, what: "the resident hook process to end" })
  })
})
