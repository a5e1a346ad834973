import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { blockMarkerCommand, blockModel, markerMessage } from "./blocks.ts"
import { claudeConfigDir, claudeEnv } from "./claude.ts"
import { call } from "../../support/harness.ts"
import { cli, run, startWorld, type World } from "./support.ts"

/**
 * The real `claude` CLI, headless, with no adapter installed: only the managed-settings file the
 * README documents (docs/claude-code-managed-settings.json), loaded with `--settings` (an admin
 * deploys the same content as /etc/claude-code/managed-settings.json), its URL pointed at the
 * test's service. Its HTTP hooks post straight to POST /engine/v1/hooks/claude-code.
 */
const model = "claude-sonnet-4-5"
const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 }
const perTest = { timeout: 180_000 }

const documented = readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "claude-code-managed-settings.json"), "utf8")

/** The documented file with the service's URL, and each hook's `onFailure` when given. */
const managedSettings = (w: World, onFailure?: "block"): string => {
  const settings = JSON.parse(documented.replaceAll("https://signals.example.com", w.server.baseUrl))
  if (onFailure) {
    for (const groups of Object.values<any>(settings.hooks)) for (const g of groups) for (const h of g.hooks) h.onFailure = onFailure
  }
  const file = join(w.home, "managed-settings.json")
  writeFileSync(file, JSON.stringify(settings))
  return file
}

/** `claude -p` as a developer's machine runs it: the key, the user and the model come from its environment. */
const claude = (w: World, prompt: string, settings: string, key = w.org.license_key, user?: string) =>
  run(cli("claude"), ["-p", prompt, "--settings", settings, "--allowedTools", "Bash"], {
    env: claudeEnv(w, { SIGNAL_ENGINE_LICENSE_KEY: key, ANTHROPIC_MODEL: model, SIGNAL_ENGINE_USER: user }),
    cwd: w.workdir,
    timeoutMs: 150_000
  })

describe("Claude Code governed by managed-settings HTTP hooks, no adapter", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(claudeConfigDir(w), { recursive: true })
    return w
  }

  it("a prompt for a blocked model never reaches the model; the user sees the rule's message", perTest, async () => {
    const w = await setUp()
    await blockModel(w, model, "no sonnet 4.5", "Sonnet 4.5 is not allowed here")
    const ran = await claude(w, "hello there", managedSettings(w))
    expect(ran.stdout + ran.stderr).toContain("Sonnet 4.5 is not allowed here")
    expect(w.model.modelCalls()).toHaveLength(0)
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "user-prompt"), "the blocked prompt")
    const prompt = session.signals.find((x: any) => x.type === "user-prompt")
    expect(prompt.metadata).toMatchObject({ model, prompt_chars: "hello there".length })
    expect(prompt.metadata.prompt).toBeUndefined()
  })

  it("a blocked tool call never runs; the model is told why, and the session holds the calls", perTest, async () => {
    const w = await setUp()
    const marker = await blockMarkerCommand(w, "Bash", usage)
    const ran = await claude(w, "make the marker", managedSettings(w))
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(marker)).toBe(false)
    // The tool result the model got back carries the rule's message.
    expect(JSON.stringify(w.model.modelCalls().at(-1)?.body)).toContain(markerMessage)
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "stop"), "the session's stop")
    const preTool = session.signals.filter((x: any) => x.type === "pre-tool")
    expect(preTool).toHaveLength(1)
    expect(preTool[0].metadata).toMatchObject({ tool_name: "Bash", command: `touch ${marker}`, model })
  })

  it("a warn rule's message is a system message, and the prompt goes on", perTest, async () => {
    const w = await setUp()
    const rule = await w.rule({
      name: "sonnet warning",
      type: "model_filter",
      condition: { model: { in: [model] } },
      action: "warn",
      action_config: { message: "Sonnet 4.5 retires soon" }
    })
    await w.ruleInForce(rule.id, { type: "user-prompt", metadata: { model } })
    const ran = await run(cli("claude"), ["-p", "hello there", "--settings", managedSettings(w), "--output-format", "stream-json", "--verbose"], {
      env: claudeEnv(w, { SIGNAL_ENGINE_LICENSE_KEY: w.org.license_key, ANTHROPIC_MODEL: model }),
      cwd: w.workdir,
      timeoutMs: 150_000
    })
    expect(ran.code, ran.stderr).toBe(0)
    const shown = ran.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    expect(shown.some((m) => m.type === "system" && m.content === "UserPromptSubmit says: Sonnet 4.5 retires soon")).toBe(true)
    expect(w.model.modelCalls().length).toBeGreaterThan(0)
  })

  it("a refused key fails open by default, and closed with onFailure: block", perTest, async () => {
    const w = await setUp()
    const open = await claude(w, "hello there", managedSettings(w), "lic_revoked0000000000000")
    expect(open.code, open.stderr).toBe(0)
    expect(open.stdout).toContain("All done.")
    expect(w.model.modelCalls().length).toBeGreaterThan(0)
    const calls = w.model.modelCalls().length
    const closed = await claude(w, "hello there", managedSettings(w, "block"), "lic_revoked0000000000000")
    expect(closed.stdout + closed.stderr).toContain("HTTP 401")
    expect(w.model.modelCalls()).toHaveLength(calls)
  })

  it("with the org's fleet credential, the session lands on the user SIGNAL_ENGINE_USER names; unknown ones are counted", perTest, async () => {
    const w = await setUp()
    const admin = { key: w.apiKey }
    const fleet = await call(w.server, "POST", "/api/v1/fleet-credentials", { ...admin, body: { name: "managed settings" } })
    expect(fleet.status).toBe(201)
    const alice = await call(w.server, "POST", "/api/v1/users", { ...admin, body: { email: "alice@example.com", name: "Alice" } })
    expect(alice.status).toBe(201)
    const ran = await claude(w, "hello there", managedSettings(w), fleet.body.key, "Alice@Example.com")
    expect(ran.code, ran.stderr).toBe(0)
    const session = await w.sessionWhere("claude-code", (s) => s.signals.some((x: any) => x.type === "stop"), "the fleet session's stop")
    expect(session.user_id).toBe(alice.body.id)
    expect(session.signals.some((x: any) => x.type === "user-prompt")).toBe(true)

    // Someone who is no user of the org (the default: refuse): not taken, counted for the admin.
    const before = (await w.sessions("claude-code")).length
    const stranger = await claude(w, "hello there", managedSettings(w), fleet.body.key, "mallory@example.com")
    expect(stranger.code, stranger.stderr).toBe(0)
    const unknown = await call(w.server, "GET", "/api/v1/fleet/unknown-identities", admin)
    const counted = (unknown.body.data as Array<any>).find((u) => u.identity === "mallory@example.com")
    expect(counted.count).toBeGreaterThanOrEqual(2)
    expect(await w.sessions("claude-code")).toHaveLength(before)
  })

  it("answers a bad body with the error envelope, an event without a signal with {}", perTest, async () => {
    const w = await setUp()
    const path = "/engine/v1/hooks/claude-code"
    const bad = await call(w.server, "POST", path, { key: w.org.license_key, rawBody: "{not json", contentType: "application/json" })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ code: expect.any(String), status: 400, request_id: expect.any(String) })
    const unkeyed = await call(w.server, "POST", path, { body: { hook_event_name: "UserPromptSubmit", session_id: "s" } })
    expect(unkeyed.status).toBe(401)
    const other = await call(w.server, "POST", path, { key: w.org.license_key, body: { hook_event_name: "Notification", session_id: "s" } })
    expect(other.status).toBe(200)
    expect(other.body).toEqual({})
  })
})
