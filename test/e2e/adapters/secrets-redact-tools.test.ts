import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { kindSpecs, seeded } from "../../secrets/positives.ts"
import { rowsHolding } from "./stored-text.ts"
import { startWorld, type World } from "./support.ts"
import { drivers, installInto, type ToolDriver } from "./tools.ts"

/**
 * The redact action in the other real CLIs (Claude Code: secrets-redact.test.ts): Gemini CLI lets
 * a BeforeTool hook rewrite the tool's input, so the call runs with the key replaced; Codex does
 * not, so the call is blocked. Either way no table holds the key.
 */
const cases: ReadonlyArray<[ToolDriver, "rewritten" | "blocked"]> = [[drivers.geminiCli, "rewritten"], [drivers.codex, "blocked"]]

describe.each(cases)("redact with the real $adapter CLI", (tool, outcome) => {
  let world: World | undefined
  afterEach(async () => {
    await world?.stop()
    world = undefined
  })

  it(`a shell call whose input holds a key is ${outcome}, and no byte of the key is stored`, { timeout: 240_000 }, async () => {
    const w = await startWorld({ finalText: "All done.", usage: tool.usage })
    world = w
    await installInto(w, tool)
    const key = kindSpecs.find((k) => k.kind === "aws_access_token")!.make(seeded(Date.now() % 100_000 + 11))
    const message = "AWS keys are taken out of tool calls"
    const rule = await w.rule({ name: "redact keys", type: "org_policy", condition: { secret_kinds: ["*"] }, action: "redact", action_config: { message } })
    await w.ruleInForce(rule.id, {
      type: "pre-tool",
      metadata: { tool_name: tool.shellTool, findings: [{ kind: "aws_access_token", where: "tool_input.command", fingerprint: "0".repeat(32) }] }
    })
    const written = join(w.workdir, "out.txt")
    w.model.script = { shell: `echo "AWS_ACCESS_KEY_ID=${key}" > ${written}`, finalText: "All done.", usage: tool.usage }
    const ran = await tool.run(w, "save the deploy credentials to out.txt")
    expect(ran.code, ran.output).toBe(0)
    if (outcome === "rewritten") expect(readFileSync(written, "utf8")).toBe("AWS_ACCESS_KEY_ID=[REDACTED:aws_access_token]\n")
    else expect(existsSync(written)).toBe(false)
    const session = await w.sessionWhere(tool.adapter, (s) => s.signals.some((x: any) => x.type === "pre-tool"), "the tool call")
    const pre = session.signals.find((x: any) => x.type === "pre-tool")
    expect(pre.metadata.findings).toEqual([expect.objectContaining({ kind: "aws_access_token" })])
    expect((await rowsHolding(w.server.databaseUrl, key)).found).toEqual({})
  })
})
