import { afterEach, describe, expect, it } from "vitest"
import { kindSpecs, seeded } from "../../secrets/positives.ts"
import { rowsHolding } from "./stored-text.ts"
import { startWorld, type World } from "./support.ts"
import { drivers, installInto } from "./tools.ts"

/**
 * The other real CLIs (Claude Code has its own suite, secrets.test.ts): a prompt holding a cloud
 * key under an org_policy secret_kinds block never reaches the model, and no table holds the key.
 */
describe.each([drivers.codex, drivers.geminiCli, drivers.copilotCli])("secrets with the real $adapter CLI", (tool) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  it("a prompt with a cloud key is blocked before any model request, and no byte of the key is stored", { timeout: 240_000 }, async () => {
    const w = await startWorld({ finalText: "All done.", usage: tool.usage })
    world = w
    await installInto(w, tool)
    const key = kindSpecs.find((k) => k.kind === "gcp_api_key")!.make(seeded(Date.now() % 100_000))
    const message = "Secrets must not be sent to a model: take the key out of the prompt"
    const rule = await w.rule({ name: "no secrets", type: "org_policy", condition: { secret_kinds: ["*"] }, action: "block", action_config: { message } })
    await w.ruleInForce(rule.id, { type: "user-prompt", metadata: { findings: [{ kind: "gcp_api_key", where: "prompt", fingerprint: "0".repeat(32) }] } })
    const ran = await tool.run(w, `call the maps API with key ${key} and summarise the result`, { env: { SIGNAL_ENGINE_SEND_PROMPTS: "1" } })
    expect(ran.output).toContain(tool.blockedPromptShows(message))
    expect(ran.output).not.toContain("All done.")
    expect(w.model.modelCalls()).toEqual([])
    const session = await w.sessionWhere(tool.adapter, (s) => s.signals.some((x: any) => x.type === "user-prompt"), "the blocked prompt")
    const prompt = session.signals.find((x: any) => x.type === "user-prompt")
    expect(prompt.metadata.findings).toEqual([expect.objectContaining({ kind: "gcp_api_key", fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/) })])
    expect(prompt.metadata.prompt).toContain("[REDACTED:gcp_api_key]")
    expect((await rowsHolding(w.server.databaseUrl, key)).found).toEqual({})
  })
})
