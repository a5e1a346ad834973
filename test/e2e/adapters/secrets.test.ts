import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { kindSpecs, seeded } from "../../secrets/positives.ts"
import { claudeConfigDir, claudeEnv, claudeUserSettings } from "./claude.ts"
import { call } from "../../support/harness.ts"
import { rowsHolding } from "./stored-text.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * Secrets in a coding tool, with the real `claude` CLI against the fake model server: the adapter
 * finds them on the developer's machine, sends what it found (kind, where, a keyed fingerprint)
 * and never the secret, and org_policy rules decide.
 */
const model = "claude-sonnet-4-5"
const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 }
const perTest = { timeout: 180_000 }
const awsKey = kindSpecs.find((k) => k.kind === "aws_access_token")!.make(seeded(Date.now() % 100_000))
const githubToken = kindSpecs.find((k) => k.kind === "github_pat")!.make(seeded(Date.now() % 100_000))

describe("secrets with the real claude CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const claude = (w: World, prompt: string, env: Record<string, string | undefined> = {}) =>
    run(cli("claude"), ["-p", prompt, "--allowedTools", "Bash"], { env: claudeEnv(w, env), cwd: w.workdir, timeoutMs: 150_000 })

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(claudeConfigDir(w), { recursive: true })
    writeFileSync(claudeUserSettings(w), JSON.stringify({ model }))
    const installed = await w.adapter(["install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key], {
      env: { CLAUDE_CONFIG_DIR: claudeConfigDir(w) }
    })
    expect(installed.code, installed.stderr).toBe(0)
    return w
  }

  it("a prompt with a cloud key is blocked before any model request, and no byte of the key is stored", perTest, async () => {
    const w = await setUp()
    const message = "Secrets must not be sent to a model: take the key out of the prompt"
    const rule = await w.rule({ name: "no secrets", type: "org_policy", condition: { secret_kinds: ["*"] }, action: "block", action_config: { message } })
    await w.ruleInForce(rule.id, {
      type: "user-prompt",
      metadata: { findings: [{ kind: "aws_access_token", where: "prompt", fingerprint: "0".repeat(32) }] }
    })
    const calls = w.model.modelCalls().length
    // Prompts sent as text (--send-prompts), so the service is given the prompt itself: with the key taken out.
    const ran = await claude(w, `deploy to staging with AWS_ACCESS_KEY_ID=${awsKey} and tell me what fails`, { SIGNAL_ENGINE_SEND_PROMPTS: "1" })
    expect(ran.stdout + ran.stderr).toContain(message)
    expect(ran.stdout).not.toContain("All done.")
    expect(w.model.modelCalls()).toHaveLength(calls)

    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "user-prompt"), "the blocked prompt")
    const prompt = session.signals.find((x: any) => x.type === "user-prompt")
    expect(prompt.metadata.findings).toEqual([{ kind: "aws_access_token", where: "prompt", fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) }])
    expect(prompt.metadata.prompt).toBe("deploy to staging with AWS_ACCESS_KEY_ID=[REDACTED:aws_access_token] and tell me what fails")
    // The whole key, and its random part alone, in no row of any table.
    const stored = await rowsHolding(w.server.databaseUrl, awsKey)
    expect(stored.tables).toBeGreaterThan(10)
    expect(stored.found).toEqual({})
    expect((await rowsHolding(w.server.databaseUrl, awsKey.slice(4))).found).toEqual({})
    expect(Object.keys((await rowsHolding(w.server.databaseUrl, "[REDACTED:aws_access_token]")).found).length).toBeGreaterThan(0)
  })

  it("an org's own pattern is matched on the machine: its prompt is blocked and the token stored nowhere", perTest, async () => {
    const w = await setUp()
    const token = `acme_${Date.now().toString(36).padEnd(24, "q7").slice(0, 24)}`
    const message = "ACME deploy tokens stay out of prompts"
    const rule = await w.rule({
      name: "acme tokens",
      type: "org_policy",
      condition: { custom_patterns: [{ kind: "acme_deploy_token", pattern: "acme_[a-z0-9]{24}" }] },
      action: "block",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, { type: "user-prompt", metadata: { findings: [{ kind: "acme_deploy_token", where: "prompt", fingerprint: "0".repeat(32) }] } })
    const policy = await call(w.server, "GET", "/engine/v1/content-policy", { key: w.org.license_key })
    expect(policy.body).toEqual({ custom_patterns: [{ kind: "acme_deploy_token", pattern: "acme_[a-z0-9]{24}" }] })
    const calls = w.model.modelCalls().length
    const ran = await claude(w, `redeploy with ${token} please`, { SIGNAL_ENGINE_SEND_PROMPTS: "1" })
    expect(ran.stdout + ran.stderr).toContain(message)
    expect(w.model.modelCalls()).toHaveLength(calls)
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "user-prompt"), "the blocked prompt")
    const prompt = session.signals.find((x: any) => x.type === "user-prompt")
    expect(prompt.metadata.prompt).toBe("redeploy with [REDACTED:acme_deploy_token] please")
    expect((await rowsHolding(w.server.databaseUrl, token)).found).toEqual({})
  })

  it("cat .env under a protected-paths rule never runs", perTest, async () => {
    const w = await setUp()
    writeFileSync(join(w.workdir, ".env"), "DATABASE_URL=postgres://app:hunter2@db/app\n")
    const leaked = join(w.workdir, "leaked.txt")
    const message = "Reading .env files is not allowed"
    const rule = await w.rule({
      name: "protected files",
      type: "org_policy",
      condition: { protected_paths: ["**/.env", "~/.ssh/*"] },
      action: "block",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: "Bash", command: "cat .env", paths: ["/srv/app/.env"] } })
    w.model.script = { shell: `cat .env > ${leaked}`, finalText: "All done.", usage }
    const ran = await claude(w, "show me the database settings")
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(leaked)).toBe(false)
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "stop"), "the session's stop")
    const pre = session.signals.find((x: any) => x.type === "pre-tool")
    expect(pre.metadata).toMatchObject({ tool_name: "Bash", command: `cat .env > ${leaked}`, paths: [join(w.workdir, ".env"), leaked] })
    expect(session.signals.some((x: any) => x.type === "post-tool")).toBe(false)
  })

  it("a key in what a tool read is reported, warned and never stored; the events list shows the finding", perTest, async () => {
    const w = await setUp()
    writeFileSync(join(w.workdir, "notes.txt"), `ci setup\nGITHUB_TOKEN=${githubToken}\n`)
    const message = "A secret reached the model's context: rotate it"
    const rule = await w.rule({
      name: "secrets read",
      type: "org_policy",
      condition: { secret_kinds: ["github_pat"] },
      action: "warn",
      action_config: { message }
    })
    await w.ruleInForce(rule.id, {
      type: "post-tool",
      metadata: { findings: [{ kind: "github_pat", where: "tool_response.stdout", fingerprint: "0".repeat(32) }] }
    })
    w.model.script = { shell: "cat notes.txt", finalText: "All done.", usage }
    const ran = await claude(w, "what is in notes.txt?")
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("All done.")
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "stop"), "the session's stop")
    const post = session.signals.find((x: any) => x.type === "post-tool")
    expect(post.metadata.findings).toEqual([{ kind: "github_pat", where: "tool_response.stdout", fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) }])
    const events = await call(w.server, "GET", `/api/v1/events?type=post-tool&adapter=claude-code`, { key: w.apiKey })
    const found = (events.body.data as Array<any>).filter((e) => e.findings !== undefined)
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({ findings: post.metadata.findings, verdict: { action: "warn", rule_id: rule.id } })
    expect((await rowsHolding(w.server.databaseUrl, githubToken)).found).toEqual({})
  })

  it("refuses content lists that cannot work, with the error envelope", perTest, async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    const create = (condition: Record<string, unknown>) =>
      call(w.server, "POST", "/api/v1/rules", {
        key: w.apiKey,
        body: { name: "x", type: "org_policy", scope: "org", scope_id: w.org.org_id, condition, action: "log", action_config: {} }
      })
    const badKind = await create({ secret_kinds: ["AWS keys"] })
    expect(badKind.status).toBe(422)
    expect(badKind.body).toMatchObject({ code: "validation_error", error: expect.stringContaining("condition.secret_kinds") })
    const everything = await create({ protected_paths: ["**/*"] })
    expect(everything.status).toBe(422)
    expect(everything.body.error).toContain("would match every file")
    const tooMany = await create({ protected_paths: Array.from({ length: 101 }, (_, i) => `**/secret-${i}.txt`) })
    expect(tooMany.status).toBe(422)
    const backtracking = await create({ custom_patterns: [{ kind: "evil", pattern: "(x+)+\\1" }] })
    expect(backtracking.status).toBe(422)
    expect(backtracking.body.error).toContain("condition.custom_patterns[0].pattern: refused")
    const everywhere = await create({ custom_patterns: [{ kind: "any", pattern: ".*" }] })
    expect(everywhere.body.error).toContain("matches the empty string")
    const shape = await create({ secret_kinds: "aws_access_token" })
    expect(shape.status).toBe(400)
    const fine = await create({ secret_kinds: ["aws_access_token", "*"], protected_paths: ["**/.env", "~/.ssh/*"] })
    expect(fine.status, JSON.stringify(fine.body)).toBe(201)
  })
})
