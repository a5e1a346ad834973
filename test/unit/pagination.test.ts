import { describe, expect, it } from "vitest"
import { decodePosition, encodePosition, parseInstant } from "../../src/domain/keyset.ts"
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

describe("the cursors of time-ordered lists (sessions, events)", () => {
  it.each([
    { order: "desc" as const, at: "2026-11-28T10:00:00.123456Z", id: "ses_0192f3a4b5c6d7e8f90a1b2c3d4e5f60" },
    { order: "asc" as const, at: "2026-11-28T10:00:00Z", id: "evt_1" },
    { order: "asc" as const, at: "2026-11-28T11:00:00+01:00", id: "" }
  ])("carry the position of a page's last item back: %j", (position) => {
    const cursor = encodePosition(position)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodePosition(cursor)).toEqual(position)
  })

  it("read an instant in either case as PostgreSQL does", () => {
    expect(decodePosition(token({ o: "desc", t: "2026-11-28t10:00:00.5z", i: "ses_1" }))).toEqual({ order: "desc", at: "2026-11-28T10:00:00.5Z", id: "ses_1" })
  })

  it.each([
    ["JSON null", token(null)],
    ["a number", token(42)],
    ["a string", token("ses_1")],
    ["no order", token({ t: "2026-11-28T10:00:00Z", i: "ses_1" })],
    ["no instant", token({ o: "desc", i: "ses_1" })],
    ["no id", token({ o: "desc", t: "2026-11-28T10:00:00Z" })],
    ["an order that is neither", token({ o: "up", t: "2026-11-28T10:00:00Z", i: "ses_1" })],
    ["an instant that is a number", token({ o: "asc", t: 1_764_324_000_000, i: "ses_1" })],
    ["an id that is a number", token({ o: "asc", t: "2026-11-28T10:00:00Z", i: 1 })],
    ["an instant with no zone", token({ o: "asc", t: "2026-11-28T10:00:00", i: "ses_1" })],
    ["a day that does not exist", token({ o: "asc", t: "2026-02-30T10:00:00Z", i: "ses_1" })],
    ["no JSON", token("{\"o\":")],
    ["not base64url at all", "%%%"]
  ])("are refused when they were not made here: %s", (_, cursor) => {
    expect(decodePosition(cursor)).toBeUndefined()
  })
})

describe("an instant given by a client (from, to, before)", () => {
  it.each<[string, string | undefined]>([
    ["2026-11-28", "2026-11-28T00:00:00Z"],
    ["2024-02-29", "2024-02-29T00:00:00Z"],
    ["2026-11-28T10:00Z", "2026-11-28T10:00Z"],
    ["2026-11-28T10:00:59Z", "2026-11-28T10:00:59Z"],
    ["2026-11-28t10:00:00.123456789z", "2026-11-28T10:00:00.123456789Z"],
    ["2026-11-28T10:00:00+14:00", "2026-11-28T10:00:00+14:00"],
    ["2026-11-28T10:00:00-05:59", "2026-11-28T10:00:00-05:59"],
    ["2026-11-28T23:59:59+0530", "2026-11-28T23:59:59+0530"],
    ["2026-11-28T10:00:00", undefined],
    ["2026-11-28T10:00:60Z", undefined],
    ["2026-11-28T10:60Z", undefined],
    ["2026-11-28T24:00Z", undefined],
    ["2026-11-28T10:00:00+15:00", undefined],
    ["2026-11-28T10:00:00+05:60", undefined],
    ["2026-02-29", undefined],
    ["2026-13-01", undefined],
    ["0000-01-01", undefined],
    ["yesterday", undefined],
    ["", undefined]
  ])("%s is read as %s", (input, read) => {
    expect(parseInstant(input)).toBe(read)
  })
})
