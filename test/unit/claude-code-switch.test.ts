import { describe, expect, it } from "vitest"
import { recordSwitch, settledSwitch, switchedModel } from "../../adapters/src/tools/claude-code-switch.js"

/** How the Claude Code adapter follows a model switch from Claude Code's PreModelSwitch/PostModelSwitch hooks. */
describe("a Claude Code model switch", () => {
  const pre = (to: string) => ({ hook_event_name: "PreModelSwitch", to_model: to, from_model: "claude-opus-5-5" })
  const post = (to: string) => ({ hook_event_name: "PostModelSwitch", to_model: to, from_model: "claude-opus-5-5" })
  const store = (initial: Record<string, any>) => {
    let state = initial
    return { read: () => state, write: (s: Record<string, any>) => (state = s), get: () => state }
  }

  it("names the landed model, from the time its switch began, until a model answers after it", async () => {
    const landed = recordSwitch(post("claude-fable-5-2"), recordSwitch(pre("claude-fable-5-2"), { offset: 10 }, 1_000), 1_030)
    expect(landed).toMatchObject({ offset: 10, switched: { to: "claude-fable-5-2", at: 1_000 } })
    const { switched } = await settledSwitch(() => landed, () => undefined)
    expect(switchedModel(switched, 999)).toBe("claude-fable-5-2")
    expect(switchedModel(switched, 1_001)).toBeUndefined()
  })

  it("waits for a switch under way to land (PostModelSwitch is not awaited by Claude Code)", async () => {
    const s = store(recordSwitch(pre("claude-fable-5-2"), {}, Date.now()))
    setTimeout(() => s.write(recordSwitch(post("claude-fable-5-2"), s.read())), 100)
    const { switched } = await settledSwitch(s.read, s.write)
    expect(switched?.to).toBe("claude-fable-5-2")
  })

  it("drops a switch that never lands (another hook refused it), so no later hook waits for it", async () => {
    const earlier = { to: "claude-opus-5-5", at: 1 }
    const s = store(recordSwitch(pre("claude-fable-5-2"), { switched: earlier }, Date.now()))
    const { switched } = await settledSwitch(s.read, s.write, 100)
    expect(switched).toEqual(earlier)
    expect(s.get().switching).toBeUndefined()
    let reads = 0
    await settledSwitch(() => (reads++, s.read()), s.write, 100)
    expect(reads).toBe(1)
  })
})
