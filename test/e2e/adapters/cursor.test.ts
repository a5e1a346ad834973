import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { waitFor } from "../../support/wait.ts"
import { startWorld, type World } from "./support.ts"

/**
 * Cursor has no CLI to run here: its documented hook payloads go through the adapter exactly as
 * Cursor would send them (JSON on stdin, `hook cursor <event>`), and the answers are Cursor's
 * JSON protocol: `{continue}` for prompts, `{permission}` before shell and MCP calls.
 */
describe("the Cursor adapter", () => {
  let world: World
  const common = (event: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      conversation_id: "conv-1",
      generation_id: "gen-1",
      hook_event_name: event,
      workspace_roots: [world.workdir],
      model: "gpt-5",
      cursor_version: "1.7.0",
      ...extra
    })
  const hook = async (event: string, extra: Record<string, unknown> = {}) => {
    const ran = await world.adapter(["hook", "cursor", event], { input: common(event, extra) })
    expect(ran.code, ran.stderr).toBe(0)
    return { json: JSON.parse(ran.stdout), stderr: ran.stderr }
  }

  beforeAll(async () => {
    world = await startWorld()
    const installed = await world.adapter(["install", "cursor", "--project", "--url", world.server.baseUrl, "--license-key", world.org.license_key])
    expect(installed.code, installed.stderr).toBe(0)
  })
  afterAll(() => world?.stop())

  it("install writes .cursor/hooks.json once, keeps the project's own hooks, and uninstall takes out only ours", async () => {
    const path = join(world.workdir, ".cursor", "hooks.json")
    const theirs = { command: "./hooks/format.sh" }
    const config = JSON.parse(readFileSync(path, "utf8"))
    config.hooks.afterFileEdit.unshift(theirs)
    writeFileSync(path, JSON.stringify(config))
    await world.adapter(["install", "cursor", "--project"])
    const twice = JSON.parse(readFileSync(path, "utf8"))
    expect(twice.version).toBe(1)
    for (const event of ["beforeSubmitPrompt", "beforeShellExecution", "beforeMCPExecution", "afterFileEdit", "stop"]) {
      const ours = twice.hooks[event].filter((h: any) => h.command.includes("signal-engine-adapter"))
      expect(ours, event).toHaveLength(1)
      expect(ours[0].command).toContain(`hook cursor ${event}`)
    }
    expect(twice.hooks.afterFileEdit[0]).toEqual(theirs)
    const doctor = await world.adapter(["doctor", "cursor", "--project"])
    expect(doctor.stdout).toMatch(/^ok +.*the key is valid/m)
    expect(doctor.stdout).toMatch(/^ok +Cursor: hooks installed/m)
    expect(doctor.code, doctor.stdout).toBe(0)

    await world.adapter(["uninstall", "cursor", "--project"])
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ version: 1, hooks: { afterFileEdit: [theirs] } })
    const missing = await world.adapter(["doctor", "cursor", "--project"])
    expect(missing.stdout).toMatch(/^FAIL +Cursor: no beforeSubmitPrompt hook/m)
    expect(missing.code).toBe(1)
    await world.adapter(["install", "cursor", "--project"])
  })

  it("a prompt for a blocked model is answered {continue:false} with the rule's message", async () => {
    const rule = await world.rule({
      name: "No o3 in Cursor",
      type: "model_filter",
      action: "block",
      condition: { model: { in: ["o3"] } },
      action_config: { message: "o3 is not approved here" }
    })
    await world.ruleInForce(rule.id, { type: "user-prompt", metadata: { model: "o3" } })
    const { json } = await hook("beforeSubmitPrompt", { prompt: "refactor main.ts", attachments: [], model: "o3" })
    expect(json).toEqual({ continue: false, user_message: "o3 is not approved here" })
    const other = await hook("beforeSubmitPrompt", { prompt: "refactor main.ts" })
    expect(other.json).toEqual({ continue: true })
  })

  it("shell commands and MCP servers an org policy names are denied before they run; others are allowed", async () => {
    const rule = await world.rule({
      name: "No destructive shell or prod DB",
      type: "org_policy",
      action: "block",
      condition: { blocked_commands: ["rm -rf"], blocked_mcp_servers: ["prod-db"] },
      action_config: { message: "not allowed by the org policy" }
    })
    await world.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Shell", command: "rm -rf /" } })
    const denied = await hook("beforeShellExecution", { command: "rm -rf ./build", cwd: world.workdir })
    expect(denied.json).toMatchObject({ permission: "deny", user_message: "not allowed by the org policy" })
    expect(denied.json.agent_message).toContain("not allowed by the org policy")
    expect((await hook("beforeShellExecution", { command: "ls -la", cwd: world.workdir })).json).toEqual({ permission: "allow" })
    const mcp = await hook("beforeMCPExecution", { tool_name: "query", tool_input: "{\"sql\":\"select 1\"}", server_name: "prod-db" })
    expect(mcp.json).toMatchObject({ permission: "deny" })
    expect((await hook("beforeMCPExecution", { tool_name: "query", tool_input: "{}", server_name: "docs" })).json).toEqual({ permission: "allow" })
  })

  it("a warn rule lets the call through and shows its message", async () => {
    const rule = await world.rule({
      name: "Careful with git push",
      type: "org_policy",
      action: "warn",
      condition: { blocked_commands: ["git push"] },
      action_config: { message: "pushes are audited" }
    })
    await world.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Shell", command: "git push" } })
    expect((await hook("beforeShellExecution", { command: "git push origin main" })).json).toEqual({ permission: "allow", user_message: "pushes are audited" })
  })

  it("every event lands in the conversation's session, in order, with what Cursor reported", async () => {
    await hook("afterShellExecution", { command: "ls -la", output: "…", duration: 42 })
    await hook("afterFileEdit", { file_path: join(world.workdir, "main.ts"), edits: [{ old_string: "a", new_string: "b" }] })
    const stop = await hook("stop", { status: "completed", loop_count: 0 })
    expect(stop.json).toEqual({})
    const [session] = await waitFor(() => world.sessions("cursor"), (s) => s.length === 1 && s[0].signals.some((x: any) => x.type === "stop"))
    const types = session.signals.map((s: any) => s.type)
    expect(types.slice(-3)).toEqual(["post-tool", "post-tool", "stop"])
    expect(types).toContain("user-prompt")
    expect(types).toContain("pre-tool")
    const shell = session.signals.find((s: any) => s.type === "post-tool" && s.metadata.tool_name === "Shell")
    expect(shell.metadata).toMatchObject({ command: "ls -la", duration_ms: 42 })
    const prompt = session.signals.find((s: any) => s.type === "user-prompt")
    // Prompt text is sent only when the settings say so; its length always.
    expect(prompt.metadata.prompt).toBeUndefined()
    expect(prompt.metadata.prompt_chars).toBe("refactor main.ts".length)
    expect(session).toMatchObject({ adapter: "cursor", tokens_in: 0, tokens_out: 0 })
  })

  it("sends the prompt's text only when configured to", async () => {
    const ran = await world.adapter(["hook", "cursor", "beforeSubmitPrompt"], {
      input: common("beforeSubmitPrompt", { conversation_id: "conv-2", prompt: "fix the login bug", model: "claude-sonnet-4-5" }),
      env: { SIGNAL_ENGINE_SEND_PROMPTS: "true" }
    })
    expect(JSON.parse(ran.stdout)).toEqual({ continue: true })
    const sessions = await world.sessions("cursor")
    const prompts = sessions.flatMap((s) => s.signals).filter((s: any) => s.type === "user-prompt")
    expect(prompts.map((p: any) => p.metadata.prompt)).toContain("fix the login bug")
  })

  it("a project's .signal-engine.json names the project of its signals", async () => {
    mkdirSync(join(world.workdir, "svc"), { recursive: true })
    writeFileSync(join(world.workdir, ".signal-engine.json"), JSON.stringify({ project_id: "proj_checkout" }))
    await hook("afterShellExecution", { conversation_id: "conv-3", command: "make", cwd: join(world.workdir, "svc"), duration: 5 })
    const sessions = await world.sessions("cursor")
    const signal = sessions.flatMap((s) => s.signals).find((s: any) => s.metadata.command === "make")
    expect(signal.metadata.project_id).toBe("proj_checkout")
    expect(existsSync(join(world.home, ".signal-engine", "spool"))).toBe(false)
  })
})
