import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { TestClock } from "effect/testing"
import { makeOutageLog } from "../../src/http/database-outage.ts"
import { isDatabaseUnavailable } from "../../src/store/database-health.ts"

const sqlError = (reason: string, cause?: unknown) => ({ _tag: "SqlError", reason: { _tag: reason, cause } })

describe("database outages", () => {
  it("are told from other SQL failures: lost or refused connections and a server shutting down", () => {
    expect(isDatabaseUnavailable(sqlError("ConnectionError"))).toBe(true)
    expect(isDatabaseUnavailable(sqlError("UnknownError", { code: "57P01" }))).toBe(true)
    expect(isDatabaseUnavailable(sqlError("UnknownError", { cause: { code: "57P03" } }))).toBe(true)
    expect(isDatabaseUnavailable(sqlError("UnknownError", { code: "XX000" }))).toBe(false)
    expect(isDatabaseUnavailable(sqlError("UniqueViolation"))).toBe(false)
    expect(isDatabaseUnavailable(new Error("connect ECONNREFUSED"))).toBe(false)
    expect(isDatabaseUnavailable(undefined)).toBe(false)
  })

  it.effect("are logged once at first, then at most once an interval with the count since", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const capture = Logger.make(({ message }) => {
        lines.push(String(Array.isArray(message) ? message[0] : message))
      })
      const log = makeOutageLog(10_000)
      const fail = (n: number) => Effect.forEach(Array.from({ length: n }), () => log(new Error("connect ECONNREFUSED")), { discard: true })
      yield* Effect.gen(function*() {
        yield* fail(50)
        yield* TestClock.adjust(4_000)
        yield* fail(50)
        yield* TestClock.adjust(6_000)
        yield* fail(1)
      }).pipe(Effect.provide(Logger.layer([capture])))
      expect(lines).toEqual([
        "database unavailable: answering 503 database_unavailable (connect ECONNREFUSED)",
        "database unavailable: 100 requests answered 503 in the last 10 s (connect ECONNREFUSED)"
      ])
    }))
})
