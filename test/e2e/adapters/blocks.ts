import { join } from "node:path"
import { expect } from "vitest"
import type { FakeUsage } from "../../support/fake-model/script.ts"
import type { World } from "./support.ts"

/**
 * Puts in force an org-wide model_filter rule that blocks `model` with `message`, as the tools'
 * blocked-prompt tests start.
 */
export const blockModel = async (w: World, model: string, name: string, message: string): Promise<void> => {
  const rule = await w.rule({ name, type: "model_filter", condition: { model: { in: [model] } }, action: "block", action_config: { message } })
  await w.ruleInForce(rule.id, { type: "user-prompt", metadata: { model } })
}

/**
 * The signal of the prompt a block stopped (`adapter`'s newest session): counted with its model,
 * its text kept on the machine unless the settings say otherwise (its length goes).
 */
export const expectBlockedPromptSignal = async (w: World, adapter: string, model: string, text: string): Promise<void> => {
  const session = await w.sessionWhere(adapter, (s) => s.signals.some((x: any) => x.type === "user-prompt"), "the blocked prompt's signal")
  const prompt = session.signals.find((x: any) => x.type === "user-prompt")
  expect(prompt.metadata.model).toBe(model)
  expect(prompt.metadata.prompt).toBeUndefined()
  expect(prompt.metadata.prompt_chars).toBe(text.length)
}

/** The message of the rule `blockMarkerCommand` puts in force. */
export const markerMessage = "touching marker files is forbidden by the org"

/**
 * Has the fake model ask to `touch` a marker file in the project, and puts in force an org_policy
 * rule that blocks that command for the tool's shell tool (`toolName`). Answers the marker's path.
 */
export const blockMarkerCommand = async (w: World, toolName: string, usage: FakeUsage): Promise<string> => {
  const marker = join(w.workdir, "blocked-marker.txt")
  w.model.script = { shell: `touch ${marker}`, finalText: "All done.", usage }
  const rule = await w.rule({
    name: "no markers",
    type: "org_policy",
    condition: { blocked_commands: ["touch *blocked-marker"] },
    action: "block",
    action_config: { message: markerMessage }
  })
  await w.ruleInForce(rule.id, { type: "pre-tool", metadata: { tool_name: toolName, command: "touch /elsewhere/blocked-marker.txt" } })
  return marker
}

/** The blocked command's session holds its one pre-tool signal, for the marker command as the model sent it. */
export const expectOneMarkerPreTool = (session: any, toolName: string, marker: string): void => {
  const preTool = session.signals.filter((x: any) => x.type === "pre-tool")
  expect(preTool).toHaveLength(1)
  expect(preTool[0].metadata).toMatchObject({ tool_name: toolName, command: `touch ${marker}` })
}
