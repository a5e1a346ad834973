import { describe, expect, it } from "@effect/vitest"
import { negatives, positives } from "../secrets/corpus.ts"
import { evaluate } from "../secrets/evaluate.ts"

/**
 * The secret scanner measured on its labelled corpus (test/secrets/): the targets, recall
 * ≥ 0.95 over every kind and false positives on ≤ 0.5% of ordinary traffic. `node
 * test/secrets/figures.ts` prints the figures for docs/benchmarks.md.
 */
describe("the secret corpus", () => {
  it("has ≥ 300 positives over ≥ 15 kinds in prompts, commands, diffs and files, and ≥ 1,000 negatives", () => {
    const pos = positives()
    expect(pos.length).toBeGreaterThanOrEqual(300)
    expect(new Set(pos.map((p) => p.kind)).size).toBeGreaterThanOrEqual(15)
    expect(new Set(pos.map((p) => p.place))).toEqual(new Set(["prompt", "shell", "diff", "env-file", "yaml", "json", "python"]))
    for (const p of pos) expect(p.text.includes(p.secret)).toBe(true)
    expect(negatives().length).toBeGreaterThanOrEqual(1000)
  })

  it("meets the targets", () => {
    const f = evaluate()
    expect({ recall: f.recall >= 0.95, false_positives: f.false_positive_rate <= 0.005, missed: f.missed.length, fp: f.false_positives })
      .toEqual({ recall: true, false_positives: true, missed: f.missed.length, fp: f.false_positives })
    // Every kind with a rule of its own (all but the generic one) is found every time.
    const below = Object.entries(f.recall_by_kind).filter(([kind, r]) => kind !== "generic_api_key" && r < 1)
    expect(below).toEqual([])
  })
})
