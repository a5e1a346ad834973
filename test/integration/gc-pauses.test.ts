import { describe, expect, it } from "vitest"
import { countGcPauses } from "../../src/cli/gc-pauses.ts"

/** Short-lived objects, far more than a young generation holds: collections happen meanwhile. */
const churn = (megabytes: number) => {
  let recent: Array<{ readonly i: number; readonly text: string }> = []
  let made = 0
  for (let i = 0; i < megabytes * 1024 * 16; i++) {
    recent.push({ i, text: `item ${i}` })
    if (recent.length === 1000) {
      made += recent.length
      recent = []
    }
  }
  return made
}

describe("countGcPauses", () => {
  it("adds up the pauses of the collections made while it counts: more than nothing, less than the time it counted", async () => {
    const started = performance.now()
    const counting = countGcPauses()
    expect(churn(400)).toBeGreaterThan(0)
    const ms = await counting.stop()
    expect(ms).toBeGreaterThan(0)
    expect(ms).toBeLessThan(performance.now() - started)
  })
})
