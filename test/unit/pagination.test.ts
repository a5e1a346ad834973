import { describe, expect, it } from "vitest"
import { decodeCursor, encodeCursor, toPage } from "../../src/domain/pagination.ts"

/** Keyset pages (spec §8): a cursor names the last item returned, and only cursors made here are taken. */
const token = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url")

describe("cursors", () => {
  it("carry the last key back unchanged, whatever it holds", () => {
    for (const key of ["2026-11-28T10:00:00.000Z\u0000ses_1", "", "ü ✓ \"quoted\""]) expect(decodeCursor(encodeCursor(key))).toBe(key)
  })

  it("are refused when they were not made here: other JSON, a key that is no string, or no JSON at all", () => {
    const forged = [token(null), token([]), token("just a string"), token(42), token({ j: "a" }), token({ k: 5 }), token({ k: null }), token("{not json"),
      "%%%"]
    expect(forged.map(decodeCursor)).toEqual(forged.map(() => undefined))
  })
})

describe("a page", () => {
  const rows = ["a", "b", "c", "d"]
  it("of fewer or exactly `limit` rows is the last: no cursor", () => {
    expect(toPage(rows.slice(0, 3), 3, (r) => r)).toEqual({ data: ["a", "b", "c"], cursor: "", has_more: false })
    expect(toPage([], 3, (r) => r)).toEqual({ data: [], cursor: "", has_more: false })
  })

  it("of `limit + 1` rows shows `limit` and a cursor after the last one shown", () => {
    const page = toPage(rows, 3, (r) => `key-${r}`)
    expect(page).toMatchObject({ data: ["a", "b", "c"], has_more: true })
    expect(decodeCursor(page.cursor)).toBe("key-c")
  })
})
