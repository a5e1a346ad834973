import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { gemini, ownSettings, perTest, served, sum, usage, userSettings } from "./gemini-cli-support.ts"
import { startWorld, type World } from "./support.ts"

/**
 * The real `gemini` CLI exporting its own OpenTelemetry logs, metrics and traces to the engine's
 * OTLP endpoint (its `telemetry.otlpEndpoint`, protocol http: OTLP JSON), with no adapter installed,
 * against the fake model server: every model call, the router's included, is usage in its session.
 */
describe("Gemini CLI's own telemetry over OTLP, with the real gemini CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  it("telemetry alone makes the session, with every call's tokens and the service's price", perTest, async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(join(w.home, ".gemini"), { recursive: true })
    const telemetry = { enabled: true, target: "local", otlpEndpoint: `${w.server.baseUrl}/engine/v1/otlp`, otlpProtocol: "http", logPrompts: false }
    writeFileSync(userSettings(w), JSON.stringify({ ...ownSettings(), telemetry }, null, 2))
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const ran = await gemini(w, "create made.txt", { env: { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${w.org.license_key}` } })
    expect(ran.code, ran.stderr).toBe(0)
    const calls = served(w)
    expect(calls.length).toBeGreaterThanOrEqual(2)
    const session = await w.sessionWhere(
      "gemini-cli",
      (s) => s.signals.filter((x: any) => x.type === "token-milestone").length === calls.length,
      "the session of the telemetry"
    )
    expect(session.tokens_in).toBe(sum(calls, (c) => c.tokensIn))
    expect(session.tokens_out).toBe(sum(calls, (c) => c.tokensOut))
    const reference = await w.costOf(calls.map((c) => ({
      model: c.model,
      tokens_in: c.tokensIn,
      tokens_out: c.tokensOut,
      ...(c.cacheRead > 0 ? { cache_read_tokens: c.cacheRead } : {})
    })))
    expect(session.cost_usd).toBeGreaterThan(0)
    expect(session.cost_usd).toBeCloseTo(reference, 9)
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["user-prompt", "post-tool"]))
    expect(session.signals.find((x: any) => x.type === "post-tool").metadata).toMatchObject({ tool_name: "run_shell_command", source: "otel" })
  })

  it("telemetry and the hook adapter together count every call once: the adapter leaves usage to the telemetry", perTest, async () => {
    const w = await startWorld({ finalText: "All done.", usage })
    world = w
    mkdirSync(join(w.home, ".gemini"), { recursive: true })
    const telemetry = { enabled: true, target: "local", otlpEndpoint: `${w.server.baseUrl}/engine/v1/otlp`, otlpProtocol: "http", logPrompts: false }
    writeFileSync(userSettings(w), JSON.stringify({ ...ownSettings(), telemetry }, null, 2))
    const installed = await w.adapter(["install", "gemini-cli", "--url", w.server.baseUrl, "--license-key", w.org.license_key])
    expect(installed.code, installed.stderr).toBe(0)
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage }
    const ran = await gemini(w, "create made.txt", { env: { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer ${w.org.license_key}` } })
    expect(ran.code, ran.stderr).toBe(0)
    const calls = served(w)
    const session = await w.sessionWhere(
      "gemini-cli",
      (s) =>
        s.signals.some((x: any) => x.type === "session-end") &&
        s.signals.filter((x: any) => x.type === "token-milestone" && x.metadata.source === "otel").length === calls.length,
      "the session of both"
    )
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["session-start", "pre-tool", "stop"]))
    expect(session.tokens_in).toBe(sum(calls, (c) => c.tokensIn))
    expect(session.tokens_out).toBe(sum(calls, (c) => c.tokensOut))
  })
})
