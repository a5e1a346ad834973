import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { kindSpecs, seeded } from "../../secrets/positives.ts"
import { claudeConfigDir, claudeEnv, claudeUserSettings } from "./claude.ts"
import { call } from "../../support/harness.ts"
import { rowsHolding } from "./stored-text.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * The redact action with the real `claude` CLI against the fake model server: a tool call runs
 * with the secrets in its input replaced (PreToolUse's updatedInput), a prompt, which Claude Code
 * gives a hook no way to rewrite, is blocked and told why; nothing stored holds the key.
 */
const model = "claude-sonnet-4-5"
const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 }
const perTest = { timeout: 180_000 }
const awsKey = kindSpecs.find((k) => k.kind === "aws_access_token")!.make(seeded(Date.now() % 100_000 + 7))
const finding = { kind: "aws_access_token", where: "tool_input.command", fingerprint: "0".repeat(32) }

describe("the redact action with the real claude CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const claude = (w: World, prompt: string, env: Record<string, string | undefined> = {}) =>
    run(cli("claude"), ["-p", prompt, "--allowedTools", "Bash"], { env: claudeEnv(w, env), cwd: w.workdir, timeoutMs: 150_000 })

  const setUp = async (message: string) => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(claudeConfigDir(w), { recursive: true })
    writeFileSync(claudeUserSettings(w), JSON.stringify({ model }))
    const installed = await w.adapter(["install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key], {
      env: { CLAUDE_CONFIG_DIR: claudeConfigDir(w) }
    })
    expect(installed.code, installed.stderr).toBe(0)
    const rule = await w.rule({ name: "redact keys", type: "org_policy", condition: { secret_kinds: ["*"] }, action: "redact", action_config: { message } })
    await w.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Bash", findings: [finding] } })
    return { w, rule }
  }

  it("a tool call whose input holds a key runs with the key replaced, and no byte of the key is stored", perTest, async () => {
    const message = "AWS keys are taken out of tool calls"
    const { w, rule } = await setUp(message)
    const written = join(w.workdir, "out.txt")
    w.model.script = { shell: `echo "AWS_ACCESS_KEY_ID=${awsKey}" > ${written}`, finalText: "All done.", usage }
    const ran = await claude(w, "save the deploy credentials to out.txt")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    // The command ran, with the key replaced.
    expect(readFileSync(written, "utf8")).toBe("AWS_ACCESS_KEY_ID=[REDACTED:aws_access_token]\n")

    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "stop"), "the session's stop")
    const pre = session.signals.find((x: any) => x.type === "pre-tool")
    expect(pre.metadata.findings).toEqual([{ ...finding, fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) }])
    expect(pre.metadata.command).toBe(`echo "AWS_ACCESS_KEY_ID=[REDACTED:aws_access_token]" > ${written}`)
    expect(session.signals.some((x: any) => x.type === "post-tool")).toBe(true)
    const events = await call(w.server, "GET", "/api/v1/events?type=pre-tool&action=redact", { key: w.apiKey })
    expect(events.status).toBe(200)
    expect((events.body.data as Array<any>).filter((e) => e.adapter === "claude-code")).toEqual([
      expect.objectContaining({ verdict: expect.objectContaining({ action: "redact", rule_id: rule.id }) })
    ])
    expect((await rowsHolding(w.server.databaseUrl, awsKey)).found).toEqual({})
    expect((await rowsHolding(w.server.databaseUrl, awsKey.slice(4))).found).toEqual({})
  })

  it("a prompt holding a key is blocked before any model request, saying why", perTest, async () => {
    const message = "AWS keys are taken out of what reaches a model"
    const { w } = await setUp(message)
    const calls = w.model.modelCalls().length
    const ran = await claude(w, `deploy with AWS_ACCESS_KEY_ID=${awsKey} please`)
    expect(ran.stdout + ran.stderr).toContain(`${message} (Claude Code cannot have the secrets taken out at UserPromptSubmit, so it is blocked)`)
    expect(ran.stdout).not.toContain("All done.")
    expect(w.model.modelCalls()).toHaveLength(calls)
    expect(existsSync(join(w.workdir, "out.txt"))).toBe(false)
    expect((await rowsHolding(w.server.databaseUrl, awsKey)).found).toEqual({})
  })

  it("refuses redact on a rule that finds no secrets, with the error envelope", perTest, async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    const created = await call(w.server, "POST", "/api/v1/rules", {
      key: w.apiKey,
      body: { name: "x", type: "org_policy", scope: "org", scope_id: w.org.org_id, condition: { blocked_tools: ["Bash"] }, action: "redact", action_config: {} }
    })
    expect(created.status).toBe(422)
    expect(created.body).toMatchObject({ code: "validation_error", error: expect.stringContaining("action: redact is for an org_policy") })
  })
})
