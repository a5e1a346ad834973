import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bestGoal, similarity, terms } from "../../src/domain/drift-lexical.ts"

/**
 * `lexical-1` is frozen: records stamped with it are replayed through it, and a replay must derive
 * the drift that was derived live. The fixture holds what it derived when it was the live method
 * (prompts of the drift corpus against their goal and another, its stop words, its suffixes);
 * any change to its terms, matching or scores fails here.
 */
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "drift-lexical-1.json"), "utf8")) as {
  readonly goals: Readonly<Record<string, string>>
  readonly stop_words_text: string
  readonly stop_words_terms: string
  readonly suffix_text: string
  readonly suffix_terms: string
  readonly cases: ReadonlyArray<{
    readonly prompt: string
    readonly goals: ReadonlyArray<string>
    readonly terms: string
    readonly best: { readonly goalId: string; readonly score: number } | null
  }>
}

describe("goal drift's lexical-1, as replay needs it", () => {
  it("derives the terms and the best goal it derived live, prompt by prompt", () => {
    expect(fixture.cases.length).toBeGreaterThan(100)
    const derived = fixture.cases.map((c) => ({
      terms: terms(c.prompt).join(" "),
      best: bestGoal(c.prompt, c.goals.map((id) => ({ id, description: fixture.goals[id]! }))) ?? null
    }))
    expect(derived).toEqual(fixture.cases.map((c) => ({ terms: c.terms, best: c.best })))
  })

  it("drops every one of its stop words, whatever their case", () => {
    expect(fixture.stop_words_text.split(", ").length).toBeGreaterThan(90)
    expect(terms(fixture.stop_words_text).join(" ")).toBe(fixture.stop_words_terms)
    expect(fixture.stop_words_terms).toBe("")
  })

  it("strips its suffixes only from words that keep three letters", () => {
    expect(terms(fixture.suffix_text).join(" ")).toBe(fixture.suffix_terms)
    expect(terms("libraries")).toEqual(["library"])
    expect(terms("ion ies ers bus")).toEqual(["ion", "ies", "ers", "bus"])
  })

  it("splits on anything that is not a letter or a digit, one separator or many", () => {
    expect(terms("src/auth/session.ts::refresh--token")).toEqual(["src", "auth", "sess", "refresh", "token"])
    expect(terms("Überprüfung der Zähler")).toEqual(["überprüfung", "der", "zähl"])
  })

  it("matches a term to a longer one it begins only from four letters, in either order", () => {
    expect(similarity(["auth"], ["authentication"])).toBe(1)
    expect(similarity(["authentication"], ["auth"])).toBe(1)
    expect(similarity(["api"], ["apis"])).toBe(0)
    expect(similarity(["cache", "tests"], ["cache", "tests", "worker"])).toBe(1)
    expect(similarity(["cache", "tests", "worker"], ["cache"])).toBe(1)
  })

  it("scores nothing against an empty side, and judges nothing without terms or goals", () => {
    expect(similarity([], ["login"])).toBe(0)
    expect(similarity(["login"], [])).toBe(0)
    expect(bestGoal("the and for", [{ id: "g", description: "login" }])).toBeUndefined()
    expect(bestGoal("login page", [])).toBeUndefined()
  })

  it("keeps the first of equally good goals", () => {
    const goals = [{ id: "first", description: "fix login" }, { id: "second", description: "fix login" }]
    expect(bestGoal("login", goals)).toEqual({ goalId: "first", score: 1 })
  })
})
