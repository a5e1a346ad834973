import { evaluate } from "./evaluate.ts"

/**
 * Prints the secret scanner's figures on the corpus as the table of docs/benchmarks.md:
 *   node test/secrets/figures.ts
 */
const f = evaluate()
const rows = Object.entries(f.recall_by_kind).map(([kind, r]) => `| \`${kind}\` | ${r.toFixed(2)} |`)
console.log(
  [
    `${f.positives} positives over ${f.kinds} kinds, ${f.negatives} negatives`,
    `recall ${f.recall.toFixed(3)}; false positives ${(f.false_positive_rate * 100).toFixed(2)}% (${f.false_positives.length} of ${f.negatives})`,
    "",
    "| kind | recall |",
    "| --- | --- |",
    ...rows
  ].join("\n")
)
