import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
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
      fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")), two(13), two(32),
      fc.option(fc.tuple(two(24), two(60), fc.option(two(60)), fc.constantFrom("Z", "z", "+14:00", "-15:00", "+0530", "+02:60")))
    ).map(([y, mo, d, time]) => time === null ? `${y}-${mo}-${d}` :
      `${y}-${mo}-${d}T${time[0]}:${time[1]}${time[2] === null ? "" : `:${time[2]}`}${time[3]}`)
    fc.assert(fc.property(value, (v) => instantShape.test(v) === (parseInstant(v) !== undefined)), { numRuns: 20_000 })
  })
})
