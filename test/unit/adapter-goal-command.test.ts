import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { goalCommand } from "../../adapters/src/goals.js"

/** `signal-engine-adapter goal …` before it reaches the service: the command line and the settings. */
describe("the adapter's goal command", () => {
  const run = async (args: Array<string>, env: Record<string, string> = {}) => {
    const out: Array<string> = []
    const err: Array<string> = []
    const home = mkdtempSync(join(tmpdir(), "adapter-goal-"))
    const code = await goalCommand(args, (s) => out.push(s), (s) => err.push(s), {
      HOME: home,
      SIGNAL_ENGINE_ADAPTER_HOME: join(home, ".signal-engine"),
      ...env
    })
    return { code, out: out.join("\n"), err: err.join("\n") }
  }

  it("answers a command it does not know, or a goal without a description, with its usage (exit 2)", async () => {
    for (const args of [["help"], ["set"], ["set", "  "], ["complete"]]) {
      const ran = await run(args)
      expect({ args, code: ran.code }).toEqual({ args, code: 2 })
      expect(ran.err).toContain("goal set <description>")
    }
  })

  it("says how to configure the adapter when it is not (exit 1)", async () => {
    const ran = await run(["list"])
    expect(ran).toEqual({ code: 1, out: "", err: expect.stringContaining("not configured (run signal-engine-adapter install") })
  })

  it("has no drift to answer when none was shown on this machine (exit 1)", async () => {
    const ran = await run(["refocus"], { SIGNAL_ENGINE_URL: "http://127.0.0.1:9", SIGNAL_ENGINE_LICENSE_KEY: "lic_00000000000000000000" })
    expect(ran).toEqual({ code: 1, out: "", err: expect.stringContaining("no goal drift to answer") })
  })
})
