import { readdirSync, readFileSync } from "node:fs"
import { createServer, request, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call } from "../../support/harness.ts"
import { freePort } from "../../support/ports.ts"
import { waitFor } from "../../support/wait.ts"
import { adapterBin, run, startWorld, type World } from "./support.ts"

/**
 * What a hook does when it gets no verdict: the fail mode decides (open by default, with a
 * warning the user sees), what could not be sent waits in the spool, and a later flush delivers
 * it under the same idempotency keys, so a signal the service did take is not counted twice.
 * Cursor's protocol is the vehicle (no CLI needed); the core is the same for every tool.
 */
describe("adapter delivery", () => {
  let world: World
  const spoolDir = () => join(world.home, ".signal-engine", "spool")
  const spooled = () => {
    try {
      return readdirSync(spoolDir()).filter((f) => f.endsWith(".json"))
    } catch {
      return []
    }
  }
  const prompt = (conversation: string, env: Record<string, string> = {}) =>
    world.adapter(["hook", "cursor", "beforeSubmitPrompt"], {
      input: JSON.stringify({ hook_event_name: "beforeSubmitPrompt", conversation_id: conversation, prompt: "hello", model: "gpt-5" }),
      env
    })
  const prompts = async () => (await world.sessions("cursor")).flatMap((s) => s.signals).filter((s: any) => s.type === "user-prompt")

  beforeAll(async () => {
    world = await startWorld()
    await world.adapter(["install", "cursor", "--url", world.server.baseUrl, "--license-key", world.org.license_key])
  })
  afterAll(() => world?.stop())

  it("fails open by default: the prompt goes on, the user is told, and the signal waits in the spool", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`
    const ran = await prompt("down-1", { SIGNAL_ENGINE_URL: closed })
    expect(ran.code).toBe(0)
    const answer = JSON.parse(ran.stdout)
    expect(answer.continue).toBe(true)
    expect(answer.user_message).toMatch(/signal-engine unreachable .*allowed because the adapter fails open/)
    expect(spooled()).toHaveLength(1)
  })

  it("fails closed when configured to: the prompt is stopped with the reason", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`
    const ran = await prompt("down-2", { SIGNAL_ENGINE_URL: closed, SIGNAL_ENGINE_FAIL_MODE: "closed" })
    const answer = JSON.parse(ran.stdout)
    expect(answer.continue).toBe(false)
    expect(answer.user_message).toMatch(/unreachable .*blocked because the adapter fails closed/)
    expect(spooled()).toHaveLength(2)
  })

  it("the next hook that reaches the service drains the spool in the background, each signal once", async () => {
    const before = spooled().length
    expect(before).toBe(2)
    const ran = await prompt("up-1")
    expect(JSON.parse(ran.stdout)).toEqual({ continue: true })
    await waitFor(async () => spooled().length, (n) => n === 0, { what: "the spool to drain" })
    // The two spooled while the service was away, and the one that reached it.
    expect(await prompts()).toHaveLength(3)
  })

  it("a signal the service took but whose answer was lost is spooled, and sending it again counts it once", async () => {
    // A proxy that passes the request on and cuts the connection instead of returning the answer.
    const proxy: Server = createServer((req, res) => {
      const upstream = request(`${world.server.baseUrl}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        answer.resume()
        answer.on("end", () => res.socket?.destroy())
      })
      req.pipe(upstream)
    })
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r))
    const via = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
    const countPrompts = async () => (await prompts()).length
    const before = await countPrompts()
    const ran = await prompt("lost-answer", { SIGNAL_ENGINE_URL: via })
    proxy.close()
    expect(JSON.parse(ran.stdout).user_message).toMatch(/unreachable/)
    expect(spooled()).toHaveLength(1)
    // The service did take it.
    expect(await countPrompts()).toBe(before + 1)
    const file = JSON.parse(readFileSync(join(spoolDir(), spooled()[0]!), "utf8"))
    const key = file.signals[0].idempotency_key
    const flushed = await world.adapter(["flush"])
    expect(flushed.stdout).toMatch(/^sent 1, rejected 0, files left 0/)
    expect(spooled()).toHaveLength(0)
    expect(await countPrompts()).toBe(before + 1)
    // The service remembers the key: the copy was answered as a duplicate, not counted again.
    const again = await call(world.server, "POST", "/engine/v1/signals", {
      key: world.org.license_key,
      headers: { "idempotency-key": key },
      body: { type: "user-prompt", adapter: "cursor", session_id: "lost-answer" }
    })
    expect(again.body.duplicate).toBe(true)
  })

  it("a key the service refuses is reported, not spooled (sending it again could not help)", async () => {
    const ran = await prompt("bad-key", { SIGNAL_ENGINE_LICENSE_KEY: "lic_00000000000000000000" })
    const answer = JSON.parse(ran.stdout)
    expect(answer.continue).toBe(true)
    expect(answer.user_message).toMatch(/refused the signal: 401/)
    expect(spooled()).toHaveLength(0)
    const doctor = await world.adapter(["doctor", "cursor"], { env: { SIGNAL_ENGINE_LICENSE_KEY: "lic_00000000000000000000" } })
    expect(doctor.code).toBe(1)
    expect(doctor.stdout).toMatch(/^FAIL +the license key is not valid \(401\)/m)
  })

  it("a hook its tool kills early (Codex's SessionEnd, 3 s) gives up on a silent service in time to spool", async () => {
    // A service that takes the connection and never answers.
    const silent: Server = createServer(() => {})
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r))
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
    try {
      const input = JSON.stringify({ hook_event_name: "SessionEnd", session_id: "codex-end", cwd: world.workdir, reason: "other" })
      // As Codex runs it: killed once its 3 s are up.
      const ran = await run("timeout", ["-s", "KILL", "3", process.execPath, adapterBin, "hook", "codex", "SessionEnd"], {
        input,
        cwd: world.workdir,
        env: world.env({ SIGNAL_ENGINE_URL: url, SIGNAL_ENGINE_TIMEOUT_MS: "10000" })
      })
      expect(ran.code).toBe(0)
      const files = spooled()
      expect(files).toHaveLength(1)
      const { signals } = JSON.parse(readFileSync(join(spoolDir(), files[0]!), "utf8"))
      expect(signals.map((s: any) => s.type)).toEqual(["session-end"])
    } finally {
      silent.closeAllConnections()
      silent.close()
    }
    expect((await world.adapter(["flush"])).stdout).toMatch(/^sent 1, rejected 0, files left 0/)
  })

  it("input that is not JSON never breaks the tool", async () => {
    const ran = await world.adapter(["hook", "cursor", "beforeSubmitPrompt"], { input: "{not json" })
    expect(ran.code).toBe(0)
    expect(JSON.parse(ran.stdout)).toMatchObject({ continue: true })
  })
})
