import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { waitFor } from "../../support/wait.ts"
import { claudeConfigDir, claudeUserSettings, installClaudeHooks, runClaude } from "./claude.ts"
import { call } from "../../support/harness.ts"
import { startWorld, type World } from "./support.ts"

/**
 * The real `claude` CLI exporting its own OpenTelemetry logs and metrics to the engine's OTLP
 * endpoint (no adapter installed on the machine), against the fake model server; and with the
 * hook adapter installed as well, where every model request and tool run must count once.
 */
const model = "claude-sonnet-4-5"
const usage = { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 }
const perTest = { timeout: 240_000 }

/** What an admin pushes to every machine: telemetry on, to the engine, with the user's key. */
const telemetryEnv = (w: World, protocol?: "http/json" | "http/protobuf", key = w.org.license_key) => ({
  CLAUDE_CODE_ENABLE_TELEMETRY: "1",
  OTEL_LOGS_EXPORTER: "otlp",
  OTEL_METRICS_EXPORTER: "otlp",
  OTEL_EXPORTER_OTLP_ENDPOINT: `${w.server.baseUrl}/engine/v1/otlp`,
  OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${key}`,
  ...(protocol ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {})
})

describe("Claude Code's own telemetry over OTLP, with the real claude CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const setUp = async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(claudeConfigDir(w), { recursive: true })
    writeFileSync(claudeUserSettings(w), JSON.stringify({ model }))
    return w
  }

  /** What the service charges for `calls` model calls of the fake's usage, sent as plain signals. */
  const referenceCost = (w: World, calls: number) =>
    w.costOf(Array.from({ length: calls }, () => ({
      model,
      tokens_in: usage.input + usage.cacheRead + usage.cacheWrite,
      tokens_out: usage.output,
      cache_read_tokens: usage.cacheRead,
      cache_write_tokens: usage.cacheWrite
    })))

  it("telemetry alone (its default protocol, http/protobuf) makes the session, with the fake's tokens and cost", perTest, async () => {
    const w = await setUp()
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const ran = await runClaude(w, ["-p", "create made.txt", "--allowedTools", "Bash"], { env: telemetryEnv(w) })
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(made)).toBe(true)
    const calls = w.model.modelCalls().length
    expect(calls).toBeGreaterThanOrEqual(2) // the shell call, then the answer
    const session = await w.sessionWhere(
      "claude-code",
      (s) => s.signals.filter((x: any) => x.type === "token-milestone").length === calls,
      "the session of the telemetry"
    )
    expect(session.tokens_in).toBe(calls * (usage.input + usage.cacheRead + usage.cacheWrite))
    expect(session.tokens_out).toBe(calls * usage.output)
    expect(session.model).toBe(model)
    expect(session.cost_usd).toBeGreaterThan(0)
    expect(session.cost_usd).toBeCloseTo(await referenceCost(w, calls), 9)
    const types = session.signals.map((x: any) => x.type)
    expect(types).toEqual(expect.arrayContaining(["user-prompt", "post-tool", "token-milestone"]))
    expect(session.signals.find((x: any) => x.type === "post-tool").metadata).toMatchObject({ tool_name: "Bash", source: "otel" })
    for (const milestone of session.signals.filter((x: any) => x.type === "token-milestone")) {
      expect(milestone.metadata.request_id).toMatch(/^req_/)
      expect(milestone.metadata.latency_ms).toBeGreaterThanOrEqual(0)
    }
  })

  it("with the org's fleet credential, records are the user.email's; an unknown one is created under create", perTest, async () => {
    const w = await setUp()
    const admin = { key: w.apiKey }
    const fleet = await call(w.server, "POST", "/api/v1/fleet-credentials", { ...admin, body: { name: "every machine" } })
    expect(fleet.status).toBe(201)
    expect((await call(w.server, "PATCH", "/api/v1/org", { ...admin, body: { unknown_identities: "create" } })).status).toBe(200)
    // Logged in with an API key, Claude Code names no account e-mail: device management sets it as a resource attribute.
    const ran = await runClaude(w, ["-p", "hello"], {
      env: { ...telemetryEnv(w, "http/json", fleet.body.key), OTEL_RESOURCE_ATTRIBUTES: "user.email=bob@example.com" }
    })
    expect(ran.code, ran.stderr).toBe(0)
    const calls = w.model.modelCalls().length
    const session = await w.sessionWhere(
      "claude-code",
      (s) => s.signals.filter((x: any) => x.type === "token-milestone").length === calls,
      "the fleet session"
    )
    const users = await call(w.server, "GET", "/api/v1/users?limit=100", admin)
    const bob = (users.body.data as Array<any>).find((u) => u.email === "bob@example.com")
    expect(bob).toMatchObject({ role: "member", status: "active" })
    expect(session.user_id).toBe(bob.id)
    expect(session.tokens_out).toBe(calls * usage.output)
  })

  it("telemetry (http/json) and the hook adapter together count each model request and tool run once", perTest, async () => {
    const w = await setUp()
    await installClaudeHooks(w)
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const ran = await runClaude(w, ["-p", "create made.txt", "--allowedTools", "Bash"], { env: telemetryEnv(w, "http/json") })
    expect(ran.code, ran.stderr).toBe(0)
    const calls = w.model.modelCalls().length
    // Both have arrived: the hooks' session-end, and the telemetry's prompt (which has no hook twin).
    const session = await w.sessionWhere(
      "claude-code",
      (s) =>
        s.signals.some((x: any) => x.type === "session-end") &&
        s.signals.some((x: any) => x.type === "user-prompt" && x.metadata.source === "otel"),
      "the session of both"
    )
    expect(session.tokens_in).toBe(calls * (usage.input + usage.cacheRead + usage.cacheWrite))
    expect(session.tokens_out).toBe(calls * usage.output)
    expect(session.cost_usd).toBeCloseTo(await referenceCost(w, calls), 9)
    expect(session.signals.filter((x: any) => x.type === "token-milestone")).toHaveLength(calls)
    expect(session.signals.filter((x: any) => x.type === "post-tool")).toHaveLength(1)
    expect(session.signals.filter((x: any) => x.type === "pre-tool")).toHaveLength(1)
  })

  it("its productivity counters (an accepted Write, cumulative; a commit, delta) become the user's figures beside spend", perTest, async () => {
    const w = await setUp()
    const written = join(w.workdir, "notes.txt")
    w.model.script = { tool: { name: "Write", input: { file_path: written, content: "one\ntwo\nthree\n" } }, finalText: "All done.", usage }
    // Cumulative, exported every 100 ms: the same running totals arrive several times (Claude Code
    // 2.1 sends the edit decision's total again at exit), and must count once.
    const cumulative = { OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: "cumulative", OTEL_METRIC_EXPORT_INTERVAL: "100" }
    const wrote = await runClaude(w, ["-p", "write notes.txt", "--allowedTools", "Write"], { env: { ...telemetryEnv(w), ...cumulative } })
    expect(wrote.code, wrote.stderr).toBe(0)
    expect(existsSync(written)).toBe(true)
    const commit = "git init -q && git add notes.txt && git -c user.email=dev@example.test -c user.name=Dev commit -q -m notes"
    w.model.script = { shell: commit, finalText: "All done.", usage }
    const committed = await runClaude(w, ["-p", "commit notes.txt", "--allowedTools", "Bash"], { env: telemetryEnv(w) })
    expect(committed.code, committed.stderr).toBe(0)
    const figures = await waitFor(
      async () => {
        const res = await call(w.server, "GET", `/api/v1/productivity?user_id=${w.org.user_id}`, { key: w.apiKey })
        return res.body?.data?.[0]
      },
      (f) => f?.commits === 1 && f?.edits_accepted === 1 && f?.cost_usd > 0,
      { what: "the counters of both runs" }
    )
    // The file's three lines (Claude Code counts the line the final newline opens too).
    expect(figures.lines_added).toBeGreaterThanOrEqual(3)
    expect(figures).toMatchObject({ key: w.org.user_id, lines_removed: 0, edits_rejected: 0, pull_requests: 0 })
    expect(figures.tokens_out).toBe(w.model.modelCalls().length * usage.output)
  })
})
