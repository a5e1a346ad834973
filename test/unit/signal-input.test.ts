import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { jsonProblem, maxJsonDepth } from "../../src/domain/text.ts"
import { BatchSignalInput } from "../../src/http/engine/signals-api.ts"

/**
 * What the ingest route refuses before a signal reaches the log: text PostgreSQL cannot store and
 * JSON nested past the limit (once in the log, such a record would fail every write of its
 * partition's projections).
 */
const decode = Schema.decodeUnknownResult(BatchSignalInput)
const problemOf = (metadata: unknown) => {
  const result = decode({ type: "post-tool", adapter: "claude-code", session_id: "cs-1", metadata })
  return result._tag === "Success" ? undefined : String(result.failure)
}
/** `levels` objects and arrays, one in the other, an object outermost. */
const nested = (levels: number, leaf: unknown = 1): unknown => {
  let value = leaf
  for (let i = levels; i >= 1; i--) value = i % 2 === 1 ? { k: value } : [value]
  return value
}

describe("a signal's text and nesting", () => {
  it("is taken when it can be stored: any Unicode, well-formed, nested up to the limit", () => {
    expect(problemOf({ prompt: "naïve 漢字 🚀", tags: ["a", { b: ["c"] }], n: 1, none: null })).toBeUndefined()
    // The signal is level 1, its metadata level 2.
    expect(problemOf(nested(maxJsonDepth - 1))).toBeUndefined()
  })

  it("is refused, saying why, with U+0000 or an unpaired surrogate in a value or a key, or nested too deep", () => {
    for (const bad of [{ prompt: "a\u0000b" }, { prompt: "\ud800" }, { ["\udfff"]: 1 }, { list: ["ok", "x\u0000"] }, { deep: { deeper: "\ud83d" } }]) {
      expect(problemOf(bad)).toContain("contains U+0000 or an unpaired UTF-16 surrogate, which cannot be stored")
    }
    expect(problemOf(nested(maxJsonDepth))).toContain(`nests objects and arrays deeper than ${maxJsonDepth} levels`)
    expect(problemOf(nested(maxJsonDepth, "\u0000"))).toContain("deeper than")
  })

  it("counts the value itself as level 1, arrays and objects alike", () => {
    expect(jsonProblem(nested(maxJsonDepth))).toBeUndefined()
    expect(jsonProblem(nested(maxJsonDepth + 1))).toBe(`nests objects and arrays deeper than ${maxJsonDepth} levels`)
    expect(jsonProblem([[{ a: ["\u0000"] }]])).toBe("contains U+0000 or an unpaired UTF-16 surrogate, which cannot be stored")
    expect(jsonProblem("fine")).toBeUndefined()
    expect(jsonProblem(42)).toBeUndefined()
    expect(jsonProblem(null)).toBeUndefined()
  })
})
