import { Effect, Redacted } from "effect"
import { expect, it } from "vitest"
import { makePgWriter } from "../../src/store/pg-writer.ts"
import { freshDatabase } from "../support/harness.ts"

/**
 * The write connection's one-round-trip query: values put in place of `$n` as literals, as they
 * were given, whatever they hold (quotes, the dollar quote's own tag, backslashes, megabytes),
 * and the COPY that ends it.
 */
it("sends each value as it is, and the COPY after the statements", async () => {
  const url = await freshDatabase()
  const values = [
    `[{"prompt":"it's done"}]`,
    "holds $se$ the tag",
    "ends with the tag's start $se",
    "back\\slash and $1 and $$",
    "naïve ✓ 日本",
    "x".repeat(2_000_000)
  ]
  const result = await Effect.runPromise(
    Effect.gen(function*() {
      const writer = yield* makePgWriter({ url: Redacted.make(url) })
      const select = values.map((_, i) => `$${i + 1}::text AS v${i + 1}`).join(", ")
      const rows = yield* writer.atomic(
        `CREATE TEMP TABLE copied (a text, b integer); SELECT ${select}; COPY copied (a, b) FROM STDIN`,
        values,
        "one\t1\ntwo\t2\n"
      )
      const copied = yield* writer.transaction((tx) => tx.query<{ a: string; b: number }>("SELECT a, b FROM copied ORDER BY b", []))
      return { rows, copied }
    }).pipe(Effect.scoped)
  )
  expect(result.rows).toEqual([values])
  expect(result.copied).toEqual([{ a: "one", b: 1 }, { a: "two", b: 2 }])
})
