import { scanText } from "../../adapters/src/secrets/scan.js"
import { negatives, type Positive, positives } from "./corpus.ts"

/**
 * The scanner's figures on the corpus: recall per kind (a positive counts when a finding of its
 * kind covers its secret), overall recall, and the share of negatives with any finding.
 */
export interface Figures {
  readonly positives: number
  readonly kinds: number
  readonly negatives: number
  readonly recall: number
  readonly recall_by_kind: Readonly<Record<string, number>>
  readonly false_positive_rate: number
  readonly false_positives: ReadonlyArray<{ readonly kind: string; readonly excerpt: string }>
  readonly missed: ReadonlyArray<{ readonly kind: string; readonly place: string }>
}

const found = (p: Positive) => scanText(p.text).some((h) => h.kind === p.kind && (p.secret.includes(h.secret) || h.secret.includes(p.secret)))

const round = (x: number) => Math.round(x * 1000) / 1000

export const evaluate = (): Figures => {
  const pos = positives()
  const neg = negatives()
  const byKind = new Map<string, { hit: number; all: number }>()
  const missed: Array<{ kind: string; place: string }> = []
  for (const p of pos) {
    const k = byKind.get(p.kind) ?? { hit: 0, all: 0 }
    k.all++
    if (found(p)) k.hit++
    else missed.push({ kind: p.kind, place: p.place })
    byKind.set(p.kind, k)
  }
  const falsePositives = neg.flatMap((text) => {
    const hits = scanText(text)
    return hits.length === 0 ? [] : [{ kind: hits[0]!.kind, excerpt: text.slice(Math.max(0, hits[0]!.start - 40), hits[0]!.start + 20) }]
  })
  const hits = [...byKind.values()].reduce((n, k) => n + k.hit, 0)
  return {
    positives: pos.length,
    kinds: byKind.size,
    negatives: neg.length,
    recall: round(hits / pos.length),
    recall_by_kind: Object.fromEntries([...byKind].map(([kind, k]) => [kind, round(k.hit / k.all)])),
    false_positive_rate: round(falsePositives.length / neg.length),
    false_positives: falsePositives,
    missed
  }
}
