import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { development, held } from "../drift/corpus.ts"
import { evaluate } from "../drift/evaluate.ts"

/**
 * `context-2` is the method acceptance stamped on records until `context-3`; records stamped
 * `context-2` are still replayed through it and must derive the drift derived live. The
 * fixture holds what it derived on the corpus, prompt by prompt and session by session: a change
 * to its judging belongs in a new method (a new stamp), not in this one.
 */
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "drift-context-2.json"), "utf8")) as {
  readonly goals: Readonly<Record<string, { readonly prompts: number; readonly judged: string; readonly sessions: string }>>
}
const letter = { "on-goal": "o", "off-goal": "x", unjudged: "-" } as const

describe("goal drift's context-2, as replay needs it", () => {
  it("judges every corpus prompt and session as it did live", () => {
    const corpus = new Map([...development, ...held].map((g) => [g.id, g]))
    const ids = Object.keys(fixture.goals)
    expect(ids.length).toBeGreaterThanOrEqual(50)
    const derived = Object.fromEntries(ids.map((id) => {
      const goal = corpus.get(id)
      if (goal === undefined) return [id, "not in the corpus any more"]
      const { prompts, sessions } = evaluate([goal], { method: "context-2" })
      return [id, {
        prompts: prompts.length,
        judged: prompts.map((p) => letter[p.got]).join(""),
        sessions: sessions.filter((s) => ["work", "aside", "drifted"].includes(s.session))
          .map((s) => `${s.session}:${s.fired}${s.firedAt === undefined ? "" : `@${s.firedAt}`}`).join(" ")
      }]
    }))
    expect(derived).toEqual(fixture.goals)
  })
})
