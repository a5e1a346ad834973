import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { Usage } from "../../src/domain/rule-evaluation.ts"
import {
  announcedRows,
  announcementsOf,
  keyOfRow,
  makeScopeKeys,
  parseScopeKey,
  pruneWindows,
  scopeKey,
  scopeKeysOf,
  type ScopeUsageRow
} from "../../src/domain/scope-usage.ts"
import { signalAt } from "../support/log-records.ts"

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

  it("fill each payload up to 7,499 bytes and start the next one past that", () => {
    const team = (id: string): ScopeUsageRow => ({
      org_id: "org_1",
      environment: "live",
      scope: "team",
      scope_id: id,
      window_key: "m:2026-03",
      partition: 7,
      cost_usd: 12.345678901,
      tokens_in: 1_234_567,
      tokens_out: 89_012
    })
    // Ten teams, the last one's id padded so that the ten make a payload of exactly 7,499 bytes.
    const rows = Array.from({ length: 10 }, (_, i) => team(`team_${i}`))
    const payloadOf = (rs: ReadonlyArray<ScopeUsageRow>) => announcementsOf(rs).map((p) => Buffer.byteLength(p))
    const pad = 7_499 - payloadOf(rows)[0]!
    const full = [...rows.slice(0, 9), team(`team_9${"x".repeat(pad)}`)]
    expect(payloadOf(full)).toEqual([7_499])
    const over = [...rows.slice(0, 9), team(`team_9${"x".repeat(pad + 1)}`)]
    const split = announcementsOf(over)
    expect(split).toHaveLength(2)
    expect(split.flatMap(announcedRows)).toEqual(over)
    expect(announcedRows(split[1]!)).toEqual([over[9]])
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

describe("the counters a signal adds to", () => {
  const keys = (list: ReadonlyArray<string>) => list.map((k) => Object.values(parseScopeKey(k)).join(" "))

  it("its org, each of its teams and its project, for the day and the month of its time in the org's zone", () => {
    const r = signalAt({ at: Date.parse("2026-03-31T23:30:00.000Z"), team_ids: ["team_a", "team_b"], time_zone: "Europe/Berlin" })
    expect(keys(scopeKeysOf(r, "proj_1"))).toEqual([
      "org_1 live org org_1 d:2026-04-01",
      "org_1 live org org_1 m:2026-04",
      "org_1 live team team_a d:2026-04-01",
      "org_1 live team team_a m:2026-04",
      "org_1 live team team_b d:2026-04-01",
      "org_1 live team team_b m:2026-04",
      "org_1 live project proj_1 d:2026-04-01",
      "org_1 live project proj_1 m:2026-04"
    ])
    expect(keys(scopeKeysOf({ ...r, time_zone: undefined, team_ids: undefined }, ""))).toEqual([
      "org_1 live org org_1 d:2026-03-31",
      "org_1 live org org_1 m:2026-03"
    ])
  })

  it("are the same when a user's keys are remembered, whatever its signals' times, zones, teams and projects", () => {
    const ts = fc.oneof(
      fc.integer({ min: Date.parse("2026-03-30T20:00:00Z"), max: Date.parse("2026-04-01T04:00:00Z") }).map((at) => new Date(at).toISOString()),
      // Forms other than the service's own: an offset, seconds only.
      fc.constantFrom("2026-04-01T00:30:00+01:00", "2026-03-31T23:30:00-02:00", "2026-03-31T23:59:59Z", "2026-04-01T00:00:01Z")
    )
    const signal = fc.record({
      user: fc.constantFrom("user_a", "user_b"),
      org: fc.constantFrom("org_1", "org_2"),
      environment: fc.constantFrom("live" as const, "test" as const),
      ts,
      zone: fc.constantFrom(undefined, "UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"),
      teams: fc.constantFrom(undefined, [], ["team_a"], ["team_b"], ["team_a", "team_b"], ["team_b", "team_a"]),
      project: fc.constantFrom(null, "", "proj_1", "proj_2")
    })
    fc.assert(
      fc.property(fc.array(signal, { maxLength: 30 }), (signals) => {
        const remembered = makeScopeKeys()
        for (const s of signals) {
          const r = { ...signalAt({ at: 0, user_id: s.user, org_id: s.org, environment: s.environment, team_ids: s.teams, time_zone: s.zone }), ts: s.ts }
          expect(remembered.keysOf(r, s.project)).toEqual(scopeKeysOf(r, s.project))
        }
      }),
      { numRuns: 300 }
    )
  })

  it("follow a user's signal through each change of day, zone, teams, project, org and environment", () => {
    const remembered = makeScopeKeys()
    const base = signalAt({ at: 0, team_ids: ["team_a"], time_zone: "Europe/Berlin" })
    // Berlin is UTC+2 from 29 March 2026.
    const steps: ReadonlyArray<readonly [Partial<typeof base>, string | null]> = [
      [{ ts: "2026-03-31T21:59:00.000Z" }, "proj_1"],
      [{ ts: "2026-03-31T22:00:00.000Z" }, "proj_1"],
      [{ ts: "2026-03-31T22:00:00.000Z", time_zone: "UTC" }, "proj_1"],
      [{ ts: "2026-03-31T22:00:00.000Z", time_zone: undefined }, "proj_1"],
      [{ ts: "2026-03-31T23:30:00+03:00" }, "proj_1"],
      [{ ts: "2026-03-31T23:30:00+01:00" }, "proj_1"],
      [{ ts: "2026-04-01T08:00:00.000Z" }, "proj_1"],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_b"] }, "proj_1"],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_a", "team_b"] }, "proj_1"],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_b", "team_a"] }, "proj_1"],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_b", "team_a"] }, "proj_2"],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_b", "team_a"] }, null],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_b", "team_a"], org_id: "org_2" }, null],
      [{ ts: "2026-04-01T08:00:00.000Z", team_ids: ["team_b", "team_a"], org_id: "org_2", environment: "test" }, null]
    ]
    for (const [over, project] of steps) {
      const r = { ...base, ...over }
      expect(keys(remembered.keysOf(r, project)), JSON.stringify(over)).toEqual(keys(scopeKeysOf(r, project)))
    }
  })
})
