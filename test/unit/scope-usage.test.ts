import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Usage } from "../../src/domain/rule-evaluation.ts"
import { announcedRows, announcementsOf, keyOfRow, parseScopeKey, pruneWindows, scopeKey, type ScopeUsageRow } from "../../src/domain/scope-usage.ts"

/**
 * The shared scopes' counters between nodes: what a commit announces (NOTIFY, whose payload
 * PostgreSQL refuses from 8,000 bytes), and what a partition keeps in memory.
 */
const text = fc.string({ unit: fc.constantFrom("a", "z", "0", "_", "-", "é", "漢", "\"", "\\"), minLength: 1, maxLength: 40 })
const row: fc.Arbitrary<ScopeUsageRow> = fc.record({
  org_id: text,
  environment: fc.constantFrom("live" as const, "test" as const),
  scope: fc.constantFrom("team" as const, "org" as const, "project" as const),
  scope_id: text,
  window_key: fc.constantFrom("d:2026-03-02", "m:2026-03"),
  partition: fc.nat({ max: 63 }),
  cost_usd: fc.double({ min: 0, max: 1e6, noNaN: true }),
  tokens_in: fc.nat(),
  tokens_out: fc.nat()
})

describe("announcements of a commit's counts", () => {
  it("carry every row, each payload under PostgreSQL's NOTIFY limit", () => {
    // Up to a few hundred rows: a batch that touched many teams and projects needs several payloads.
    fc.assert(
      fc.property(fc.array(row, { maxLength: 300, size: "max" }), (rows) => {
        const payloads = announcementsOf(rows)
        for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8_000)
        expect(payloads.flatMap(announcedRows)).toEqual(rows)
        // As few payloads as the limit allows: no two neighbours would fit in one.
        for (let i = 0; i + 1 < payloads.length; i++) {
          expect(Buffer.byteLength(payloads[i]!) + Buffer.byteLength(payloads[i + 1]!)).toBeGreaterThan(7_500)
        }
      }),
      { numRuns: 100, endOnFailure: true }
    )
    expect(announcementsOf([])).toEqual([])
  })

  it("name a scope window by a key that reads back", () => {
    fc.assert(fc.property(row, (r) => {
      const key = keyOfRow(r)
      expect(key).toBe(scopeKey(r.org_id, r.environment, r.scope, r.scope_id, r.window_key))
      expect(parseScopeKey(key)).toEqual({ org_id: r.org_id, environment: r.environment, scope: r.scope, scope_id: r.scope_id, window_key: r.window_key })
    }))
  })
})

describe("a partition's counters in memory", () => {
  it("keep the two latest windows of each kind per scope; the older ones go", () => {
    const usage: Usage = { cost_usd: 1, tokens_in: 1, tokens_out: 0 }
    const counts = new Map<string, Usage>()
    for (const day of ["2026-02-27", "2026-03-01", "2026-02-28", "2026-03-02"]) counts.set(scopeKey("org_1", "live", "team", "team_a", `d:${day}`), usage)
    for (const month of ["2026-01", "2026-03", "2026-02"]) counts.set(scopeKey("org_1", "live", "team", "team_a", `m:${month}`), usage)
    counts.set(scopeKey("org_1", "live", "team", "team_b", "d:2026-02-01"), usage)
    counts.set(scopeKey("org_1", "test", "team", "team_a", "d:2026-02-01"), usage)
    pruneWindows(counts)
    expect([...counts.keys()].map((k) => Object.values(parseScopeKey(k)).join(" ")).sort()).toEqual([
      "org_1 live team team_a d:2026-03-01",
      "org_1 live team team_a d:2026-03-02",
      "org_1 live team team_a m:2026-02",
      "org_1 live team team_a m:2026-03",
      "org_1 live team team_b d:2026-02-01",
      "org_1 test team team_a d:2026-02-01"
    ])
  })
})
