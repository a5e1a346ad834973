import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { instantOf, later } from "../../src/domain/instants.ts"
import { parseInstant } from "../../src/domain/keyset.ts"
import { instantShape } from "../../src/http/query.ts"

/**
 * The documents publish instantShape as the pattern of every instant parameter; Schemathesis
 * (and any client generator) takes a value matching it as valid. So it must accept exactly what
 * the server parses: a value it allows and the server refuses is a schema-valid request answered 400.
 */
describe("the documented shape of an instant", () => {
  const dated = (year: number, monthDay: string) => `${String(year).padStart(4, "0")}-${monthDay}T22:45:59.176499650Z`

  it("allows 29 February exactly in the years the server takes it (every year 1–9999)", () => {
    const disagreements: Array<string> = []
    for (let year = 1; year <= 9999; year++) {
      for (const monthDay of ["02-28", "02-29", "02-30"]) {
        const value = dated(year, monthDay)
        if (instantShape.test(value) !== (parseInstant(value) !== undefined)) disagreements.push(value)
      }
    }
    expect(disagreements).toEqual([])
    expect(instantShape.test(dated(8070, "02-29"))).toBe(false)
    expect(instantShape.test(dated(2000, "02-29"))).toBe(true)
    expect(instantShape.test(dated(1900, "02-29"))).toBe(false)
  })

  it("agrees with the server on any date, time and zone", () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"))
    const value = fc.tuple(
      fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")),
      two(13),
      two(32),
      fc.option(fc.tuple(two(24), two(60), fc.option(two(60)), fc.constantFrom("Z", "z", "+14:00", "-15:00", "+0530", "+02:60")))
    ).map(([y, mo, d, time]) =>
      time === null ?
        `${y}-${mo}-${d}` :
        `${y}-${mo}-${d}T${time[0]}:${time[1]}${time[2] === null ? "" : `:${time[2]}`}${time[3]}`
    )
    fc.assert(fc.property(value, (v) => instantShape.test(v) === (parseInstant(v) !== undefined)), { numRuns: 20_000 })
  })
})

describe("a record's timestamp read without Date.parse", () => {
  const instant = fc.date({ min: new Date("0100-01-01T00:00:00.000Z"), max: new Date("9999-12-31T23:59:59.999Z"), noInvalidDate: true })
    .map((d) => d.toISOString())
  /** The service's own form with one character changed, dropped or added: what a record from elsewhere may hold. */
  const nearby = fc.tuple(instant, fc.nat({ max: 24 }), fc.constantFrom("0", "1", "5", "9", "-", ":", ".", "T", "Z", "/", " ", "a", ""), fc.boolean())
    .map(([ts, at, c, insert]) => ts.slice(0, at) + c + ts.slice(insert ? at : at + 1))

  it("comes to what Date.parse does, in the service's own form and in any other", () => {
    fc.assert(
      fc.property(fc.oneof(instant, nearby), (ts) => {
        expect(instantOf(ts)).toBe(Date.parse(ts))
      }),
      { numRuns: 5_000 }
    )
    for (const ts of ["2026-02-30T10:00:00.000Z", "2026-12-31T24:00:00.000Z", "0999-01-01T00:00:00.000Z", "2026-11-22T10:00:00.000+01:00"]) {
      expect(instantOf(ts)).toBe(Date.parse(ts))
    }
  })

  it("orders two instants as Date.parse does, whichever form each has", () => {
    const either = fc.oneof(instant, instant.map((ts) => ts.replace("Z", "+00:00")))
    fc.assert(
      fc.property(either, either, (a, b) => {
        expect(later(a, b)).toBe(Date.parse(a) >= Date.parse(b) ? a : b)
      }),
      { numRuns: 2_000 }
    )
  })

  it.each([
    ["an hour ahead in Paris is earlier than 09:30Z", "2026-11-22T10:00:00+01:00", "2026-11-22T09:30:00.000Z", "2026-11-22T09:30:00.000Z"],
    ["09:30Z is later than 10:00 in Paris", "2026-11-22T09:30:00.000Z", "2026-11-22T10:00:00+01:00", "2026-11-22T09:30:00.000Z"],
    ["New York's evening is the next UTC day", "2026-11-22T20:00:00-05:00", "2026-11-23T00:30:00.000Z", "2026-11-22T20:00:00-05:00"],
    ["the same instant in two forms: the first", "2026-11-22T11:00:00+01:00", "2026-11-22T10:00:00.000Z", "2026-11-22T11:00:00+01:00"],
    ["the same instant in the service's form: the first", "2026-11-22T10:00:00.000Z", "2026-11-22T10:00:00.000Z", "2026-11-22T10:00:00.000Z"],
    ["two instants in the service's form", "2026-11-22T10:00:00.001Z", "2026-11-22T10:00:00.000Z", "2026-11-22T10:00:00.001Z"]
  ])("the later of two timestamps: %s", (_, a, b, expected) => {
    expect(later(a, b)).toBe(expected)
  })
})
