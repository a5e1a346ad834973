/**
 * Offline check, session level: context-2 with a model's cosine (prompt to goal, from models.py)
 * overruling its verdict (off → on above t1, on → off below t2), run through the engine's fold as
 * test/drift/evaluate.ts does, so sessions count too. t1 and t2 are chosen on the development and
 * held-out and wide goals by the distance to the four targets; both fresh sets are only reported.
 *
 *     git apply bench/drift-semantic-check/overrule.patch
 *     DRIFT_SCORES=scores.json DRIFT_MODEL=bge-small-en-v1.5-q npx node bench/drift-semantic-check/sessions.ts
 *     git apply -R bench/drift-semantic-check/overrule.patch
 */
import { development, fresh, freshTwo, held, wide } from "../../test/drift/corpus.ts"
import { evaluate, type Figures } from "../../test/drift/evaluate.ts"

const cut = (globalThis as Record<string, unknown>).driftOverrule as { t1: number; t2: number } | undefined
if (cut === undefined || process.env.DRIFT_SCORES === undefined) throw new Error("apply overrule.patch and set DRIFT_SCORES, DRIFT_MODEL")

const miss = (f: Figures) =>
  Math.max(0, f.on_goal_called_off - 0.1) + Math.max(0, 0.8 - f.off_goal_recall) + Math.max(0, f.on_goal_sessions_drift_fired - 0.03) +
  Math.max(0, 0.8 - f.drift_found_within_3)
const row = (f: Figures) => [f.on_goal_called_off, f.off_goal_recall, f.on_goal_sessions_drift_fired, f.drift_found_within_3]

const steps = (from: number, to: number, by: number) =>
  Array.from({ length: Math.round((to - from) / by) + 1 }, (_, i) => Math.round((from + i * by) * 1000) / 1000)
const t1s = [...steps(Number(process.env.T1_FROM ?? 0.5), Number(process.env.T1_TO ?? 0.8), 0.02), 9]
const t2s = [-9, ...steps(Number(process.env.T2_FROM ?? 0.3), Number(process.env.T2_TO ?? 0.6), 0.02)]
// The other development material: the held-out goals and the wide set, ranked together.
const tuning = [...held, ...wide]
const results = []
for (const t1 of t1s) {
  for (const t2 of t2s) {
    if (t2 >= t1) continue
    Object.assign(cut, { t1, t2 })
    const [d, h] = [evaluate(development).figures, evaluate(tuning).figures]
    results.push({ t1, t2, miss: Math.round((miss(d) + miss(h)) * 1000) / 1000, d, h })
  }
}
// KEEP_DEVELOPMENT=1: only pairs that keep the development goals within every target, ranked by the miss on the held-out and wide goals.
const kept = process.env.KEEP_DEVELOPMENT ? results.filter((r) => miss(r.d) === 0).map((r) => ({ ...r, miss: Math.round(miss(r.h) * 1000) / 1000 })) : results
kept.sort((a, b) => a.miss - b.miss)
Object.assign(cut, { t1: 9, t2: -9 })
const base = {
  development: row(evaluate(development).figures),
  heldAndWide: row(evaluate(tuning).figures),
  fresh: row(evaluate(fresh).figures),
  freshTwo: row(evaluate(freshTwo).figures)
}
const best = kept.slice(0, Number(process.env.TOP ?? 5)).map((r) => {
  Object.assign(cut, { t1: r.t1, t2: r.t2 })
  return {
    t1: r.t1,
    t2: r.t2,
    miss: r.miss,
    development: row(r.d),
    heldAndWide: row(r.h),
    fresh: row(evaluate(fresh).figures),
    freshTwo: row(evaluate(freshTwo).figures)
  }
})
console.log(
  JSON.stringify(
    {
      model: process.env.DRIFT_MODEL,
      columns: ["on_goal_called_off", "off_goal_recall", "on_goal_sessions_drift_fired", "drift_found_within_3"],
      context2: base,
      best
    },
    null,
    1
  )
)
