import { appendFileSync, existsSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { waitFor } from "../../support/wait.ts"
import { startWorld, type World } from "./support.ts"
import { drivers, installInto, servedCalls, tokensInOf, total } from "./tools.ts"

/**
 * The real `codex exec` exporting its own OpenTelemetry logs (`[otel]` in config.toml, OTLP/HTTP,
 * binary protobuf and JSON) to the engine, against the fake model server: with no adapter, and
 * with the hook adapter installed as well, where every model request counts once.
 */
const codex = drivers.codex
const perTest = { timeout: 240_000 }

/** What an admin adds to the user's config.toml: Codex's exporter to the engine, with the user's key. */
const otelSection = (w: World, protocol: "binary" | "json") =>
  [
    ``,
    `[otel]`,
    `log_user_prompt = false`,
    `exporter = { otlp-http = { endpoint = "${w.server.baseUrl}/engine/v1/otlp/v1/logs", protocol = "${protocol}", ` +
    `headers = { "authorization" = "Bearer ${w.org.license_key}" } } }`,
    ``
  ].join("\n")

describe("Codex's own telemetry over OTLP, with the real codex CLI", () => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  const runWith = async (w: World, protocol: "binary" | "json") => {
    appendFileSync(join(w.home, ".codex", "config.toml"), otelSection(w, protocol))
    const made = join(w.workdir, "made.txt")
    w.model.script = { shell: `touch ${made}`, finalText: "All done.", usage: codex.usage }
    const ran = await codex.run(w, "create made.txt")
    expect(ran.code, ran.output).toBe(0)
    expect(existsSync(made)).toBe(true)
    const calls = servedCalls(w, codex)
    expect(calls.length).toBeGreaterThanOrEqual(2)
    return calls
  }

  const reference = (w: World, calls: ReturnType<typeof servedCalls>) =>
    w.costOf(calls.map((u) => ({
      model: codex.model,
      tokens_in: tokensInOf(u),
      tokens_out: u.output,
      ...(u.cacheRead > 0 ? { cache_read_tokens: u.cacheRead } : {})
    })))

  it("telemetry alone (binary protobuf) makes the session, with every request's tokens and the service's price", perTest, async () => {
    const w = await startWorld({ finalText: "All done.", usage: codex.usage })
    world = w
    codex.prepare(w)
    const calls = await runWith(w, "binary")
    const session = await w.sessionWhere(
      "codex",
      (s) => s.signals.filter((x: any) => x.type === "token-milestone").length === calls.length,
      "the session of the telemetry"
    )
    expect(session.tokens_in).toBe(total(calls, tokensInOf))
    expect(session.tokens_out).toBe(total(calls, (u) => u.output))
    expect(session.cost_usd).toBeGreaterThan(0)
    expect(session.cost_usd).toBeCloseTo(await reference(w, calls), 9)
    expect(session.signals.map((x: any) => x.type)).toEqual(expect.arrayContaining(["user-prompt", "post-tool"]))
  })

  it("telemetry (JSON) and the hook adapter together count every request once", perTest, async () => {
    const w = await startWorld({ finalText: "All done.", usage: codex.usage })
    world = w
    await installInto(w, codex)
    const calls = await runWith(w, "json")
    // Codex exports its telemetry as it exits, after its SessionEnd hook: the adapter ends the
    // session once Codex is gone, so the usage lands in the hooks' session, before its end.
    const milestones = (all: ReadonlyArray<any>) =>
      all.flatMap((s) => s.signals).filter((x: any) => x.type === "token-milestone" && x.metadata.source === "otel").length
    const sessions = await waitFor(
      () => w.sessions("codex"),
      (all) => all.some((s) => s.signals.some((x: any) => x.type === "session-end")) && milestones(all) === calls.length,
      { what: "the hooks' session, ended, with the telemetry's usage", timeoutMs: 45_000 }
    )
    expect(sessions).toHaveLength(1)
    const [session] = sessions
    expect(session.end_reason).toBe("session-end")
    expect(session.signals.map((x: any) => x.type).at(-1)).toBe("session-end")
    expect(session.tokens_in).toBe(total(calls, tokensInOf))
    expect(session.tokens_out).toBe(total(calls, (u) => u.output))
    expect(session.cost_usd).toBeCloseTo(await reference(w, calls), 9)
  })
})
