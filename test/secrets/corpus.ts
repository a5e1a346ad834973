import { fileURLToPath } from "node:url"
import { generatedNegatives, sourceNegatives } from "./negatives.ts"
import { contexts, kindSpecs, seeded } from "./positives.ts"

/**
 * The labelled corpus of the secret scanner: positives (a synthetic secret of a known kind in a
 * prompt, command, diff or file) and negatives (ordinary coding-tool traffic). Built the same on
 * every run from the seed; the source negatives follow this repository's code.
 */
export interface Positive {
  readonly kind: string
  readonly place: string
  readonly secret: string
  readonly text: string
}

const root = fileURLToPath(new URL("../..", import.meta.url))

export const perKind = 18

export const positives = (): ReadonlyArray<Positive> => {
  const r = seeded(42)
  return kindSpecs.flatMap((spec) =>
    Array.from({ length: perKind }, (_, i) => {
      const context = contexts[i % contexts.length]!
      const secret = spec.make(r)
      return { kind: spec.kind, place: context.place, secret, text: context.text(secret, spec.variable, r) }
    })
  )
}

export const negatives = (): ReadonlyArray<string> => [...generatedNegatives(seeded(7), 500), ...sourceNegatives(root)]
