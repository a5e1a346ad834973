import { describe, expect, it } from "@effect/vitest"
import { development, fresh, freshTwo, held, isPrompt, wide } from "../drift/corpus.ts"
import { evaluate, type Figures } from "../drift/evaluate.ts"

/**
 * Goal drift measured on the labelled corpus (test/drift/): what users see, prompt by prompt and
 * session by session. The targets hold on the development goals; the held-out and the fresh
 * held-out goals must not get worse than they are (the fresh ones are never tuned on).
 * `npm run bench -- --scenarios drift` prints the figures.
 */
const targets = (f: Figures) => ({
  "on-goal prompts called off-goal ≤ 10%": f.on_goal_called_off <= 0.1,
  "off-goal recall ≥ 0.8": f.off_goal_recall >= 0.8,
  "drift in ≤ 3% of on-goal sessions": f.on_goal_sessions_drift_fired <= 0.03,
  "drift in ≥ 80% of drifted sessions, within 3 prompts": f.drift_found_within_3 >= 0.8
})

describe("the goal-drift corpus", () => {
  it("has goals of every kind, each with on- and off-goal prompts and labelled sessions", () => {
    const all = [...development, ...held, ...wide, ...fresh, ...freshTwo]
    expect(development.length).toBeGreaterThanOrEqual(40)
    expect(new Set(all.map((g) => g.kind))).toEqual(new Set(["bug", "feature", "migration", "refactor", "infrastructure", "docs"]))
    expect(new Set(all.map((g) => g.id)).size).toBe(all.length)
    for (const g of all) {
      const prompts = g.work.filter(isPrompt).length + g.off.length + g.drift.filter(isPrompt).length
      expect({ goal: g.id, prompts: prompts >= 12, work: g.work.filter(isPrompt).length >= 6, drift: g.drift.filter(isPrompt).length >= 3 })
        .toEqual({ goal: g.id, prompts: true, work: true, drift: true })
    }
  })

  it("meets the targets on the development goals", () => {
    const { figures } = evaluate(development)
    expect({ figures, met: targets(figures) }).toEqual({ figures, met: Object.fromEntries(Object.keys(targets(figures)).map((k) => [k, true])) })
  })

  it("does no worse than it did on the held-out goals", () => {
    const { figures } = evaluate(held)
    // The figures when the held-out goals were written (docs/benchmarks.md): a change may only improve them.
    expect({
      called_off: figures.on_goal_called_off <= 0.178,
      recall: figures.off_goal_recall >= 0.706,
      false_drift: figures.on_goal_sessions_drift_fired <= 0.1,
      found: figures.drift_found_within_3 >= 0.4
    }).toEqual({ called_off: true, recall: true, false_drift: true, found: true })
  })

  it("does no worse than it did on the wide goals", () => {
    const { figures } = evaluate(wide)
    // Measured when the set was added (docs/benchmarks.md): development material for placing thresholds.
    expect({
      called_off: figures.on_goal_called_off <= 0.082,
      recall: figures.off_goal_recall >= 0.492,
      false_drift: figures.on_goal_sessions_drift_fired <= 0.031,
      found: figures.drift_found_within_3 >= 0.438
    }).toEqual({ called_off: true, recall: true, false_drift: true, found: true })
  })

  it("does no worse than it did on the fresh held-out goals", () => {
    const { figures } = evaluate(fresh)
    // Measured before any change made for them (docs/benchmarks.md); only measured on, never tuned on.
    expect({
      called_off: figures.on_goal_called_off <= 0.333,
      recall: figures.off_goal_recall >= 0.66,
      false_drift: figures.on_goal_sessions_drift_fired <= 0.208,
      found: figures.drift_found_within_3 >= 0.333
    }).toEqual({ called_off: true, recall: true, false_drift: true, found: true })
  })

  it("does no worse than it did on the second fresh held-out goals", () => {
    const { figures } = evaluate(freshTwo)
    // Measured once, when the set was added (docs/benchmarks.md); written blind to the detector, never tuned on.
    expect({
      called_off: figures.on_goal_called_off <= 0.225,
      recall: figures.off_goal_recall >= 0.485,
      false_drift: figures.on_goal_sessions_drift_fired <= 0.083,
      found: figures.drift_found_within_3 >= 0.25
    }).toEqual({ called_off: true, recall: true, false_drift: true, found: true })
  })

  it("judges records accepted before context-2 as they were judged then (lexical-1)", () => {
    // The corpus's figures under the method that was in force before: a replay of an old log folds the same.
    const { figures } = evaluate(development, { method: "lexical-1" })
    expect(figures).toMatchObject({ on_goal_called_off: 0.702, off_goal_recall: 0.958, on_goal_sessions_drift_fired: 0.893 })
  })
})
