/**
 * Writes the drift corpus and context-2's judgement of every prompt as JSON (stdout), for the
 * offline check of a semantic similarity in check.py (docs/benchmarks.md, Goal drift, Tried).
 * `npx node bench/drift-semantic-check/dump-corpus.ts > corpus.json`
 */
import { development, fresh, freshTwo, held, wide } from "../../test/drift/corpus.ts"
import { evaluate } from "../../test/drift/evaluate.ts"

const sets = { dev: development, held, wide, fresh, fresh2: freshTwo }
const out = Object.fromEntries(
  Object.entries(sets).map(([name, goals]) => [name, { goals, prompts: evaluate(goals, { method: "context-2" }).prompts }])
)
process.stdout.write(JSON.stringify(out))
