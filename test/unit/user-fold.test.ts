import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import type { LogRecord, SignalRecord } from "../../src/domain/records.ts"
import type { Usage } from "../../src/domain/rule-evaluation.ts"
import { makeScopeKeys, scopeKeysOf } from "../../src/domain/scope-usage.ts"
import { instantOf } from "../../src/domain/instants.ts"
import type { EventRow, SessionRow } from "../../src/domain/projection-rows.ts"
import { fold, maxOpenSessions } from "../../src/domain/user-fold.ts"
import { emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import { signalAt as signal } from "../support/log-records.ts"

const t0 = Date.parse("2026-03-01T09:00:00.000Z")
const iso = (ms: number) => new Date(ms).toISOString()

const run = (records: ReadonlyArray<LogRecord>) => {
  let state: UserState = emptyUserState
  const sessions = new Map<string, SessionRow>()
  const events: Array<EventRow> = []
  records.forEach((r, offset) => {
    const out = fold(state, r, { partition: 0, offset })
    state = out.state
    for (const s of out.sessions) sessions.set(s.id, s)
    events.push(...out.events)
  })
  return { state, sessions: [...sessions.values()], events }
}

describe("the per-user fold", () => {
  it("keeps at most maxOpenSessions open per user, ending the least recently active one as timed out", () => {
    const records = Array.from({ length: maxOpenSessions + 8 }, (_, i) => signal({ at: t0 + i * 1000, adapter: `tool-${i}` }))
    // tool-0 is active again just before the cap is passed: tool-1 is then the least recent.
    records.splice(maxOpenSessions, 0, signal({ at: t0 + (maxOpenSessions - 0.5) * 1000, adapter: "tool-0" }))
    const { state, sessions } = run(records)
    expect(Object.keys(state.open)).toHaveLength(maxOpenSessions)
    const ended = sessions.filter((s) => s.ended_at !== null)
    expect(ended.map((s) => s.adapter)).toEqual(Array.from({ length: 8 }, (_, i) => `tool-${i + 1}`))
    for (const s of ended) expect(s).toMatchObject({ end_reason: "timeout", ended_at: s.last_activity_at })
    expect(Object.values(state.open).map((s) => s.adapter)).toContain("tool-0")
  })

  it("counts tokens, cost, models and errors into the session and the event", () => {
    const { sessions, events } = run([
      signal({ at: t0, type: "session-start" }),
      signal({
        at: t0 + 1000,
        metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 20, project_id: "proj_x" },
        cost: { usd: 0.0006, estimated: true, model_known: true }
      }),
      signal({
        at: t0 + 2000,
        metadata: { model: "gpt-4o", tokens_in: 10, tokens_out: 5, error_code: "rate_limited", latency_ms: 812 },
        cost: { usd: 0.5, estimated: false, model_known: true }
      }),
      signal({ at: t0 + 3000, metadata: { model: "claude-sonnet-4", tokens_in: 1, tokens_out: 1 } })
    ])
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({
      started_at: iso(t0),
      last_activity_at: iso(t0 + 3000),
      ended_at: null,
      signal_count: 4,
      error_count: 1,
      tokens_in: 111,
      tokens_out: 26,
      cost_usd: 0.5006,
      models: ["claude-sonnet-4", "gpt-4o"],
      primary_model: "claude-sonnet-4",
      project_id: "proj_x",
      client_session_id: "cs-1"
    })
    expect(events.map((e) => e.session_id)).toEqual(Array(4).fill(sessions[0]!.id))
    expect(events[2]).toMatchObject({ error_code: "rate_limited", latency_ms: 812, model: "gpt-4o", cost_usd: 0.5 })
    expect(events[0]!.id).toBe(`evt_${events[0]!.signal_id.slice(4)}`)
  })

  it("session-end closes the session at that signal; the next signal opens another", () => {
    const { sessions } = run([
      signal({ at: t0 }),
      signal({ at: t0 + 5000, type: "session-end" }),
      signal({ at: t0 + 6000 })
    ])
    expect(sessions.map((s) => [s.ended_at, s.end_reason, s.signal_count])).toEqual([
      [iso(t0 + 5000), "session-end", 2],
      [null, null, 1]
    ])
  })

  it("activity after the timeout ends the old session at its last activity", () => {
    const { sessions } = run([
      signal({ at: t0 }),
      signal({ at: t0 + 60_000 }),
      signal({ at: t0 + 60_000 + 1800_000 + 1 })
    ])
    expect(sessions.map((s) => [s.started_at, s.ended_at, s.end_reason])).toEqual([
      [iso(t0), iso(t0 + 60_000), "timeout"],
      [iso(t0 + 60_000 + 1800_001), null, null]
    ])
  })

  it("a tick closes a session only if nothing happened since its timer was set", () => {
    const first = signal({ at: t0 })
    const open = run([first])
    const sessionId = open.sessions[0]!.id
    const tick = (last: number): LogRecord => ({
      v: 1,
      kind: "session-timeout",
      org_id: "org_1",
      environment: "live",
      user_id: "user_a",
      ts: iso(t0 + 2_000_000),
      session_id: sessionId,
      last_activity_at: iso(last)
    })
    const stale = run([first, signal({ at: t0 + 10 }), tick(t0)])
    expect(stale.sessions[0]!.ended_at).toBeNull()
    const due = run([first, signal({ at: t0 + 10 }), tick(t0 + 10)])
    expect(due.sessions[0]).toMatchObject({ ended_at: iso(t0 + 10), end_reason: "timeout" })
    expect(due.state.open).toEqual({})
  })

  it("adapters and environments have separate sessions", () => {
    const { sessions } = run([
      signal({ at: t0, adapter: "cursor" }),
      signal({ at: t0 + 1, adapter: "claude-code" }),
      signal({ at: t0 + 2, adapter: "cursor", environment: "test" }),
      signal({ at: t0 + 3, adapter: "cursor" })
    ])
    expect(sessions.map((s) => [s.adapter, s.environment, s.signal_count])).toEqual([
      ["cursor", "live", 2],
      ["claude-code", "live", 1],
      ["cursor", "test", 1]
    ])
  })

  it("keeps two concurrent runs of one tool apart, each with its own tokens, and the user's usage whole", () => {
    const { state, sessions, events } = run([
      signal({ at: t0, type: "session-start", client_session_id: "run-a" }),
      signal({ at: t0 + 1, type: "session-start", client_session_id: "run-b" }),
      signal({ at: t0 + 2, client_session_id: "run-a", metadata: { model: "m", tokens_in: 100, tokens_out: 10 } }),
      signal({ at: t0 + 3, client_session_id: "run-b", metadata: { model: "m", tokens_in: 7, tokens_out: 1 } }),
      signal({ at: t0 + 4, client_session_id: "run-a", type: "session-end" }),
      signal({ at: t0 + 5, client_session_id: "run-b", metadata: { model: "m", tokens_in: 5, tokens_out: 2 } })
    ])
    expect(sessions.map((s) => [s.client_session_id, s.signal_count, s.tokens_in, s.tokens_out, s.end_reason])).toEqual([
      ["run-a", 3, 100, 10, "session-end"],
      ["run-b", 3, 12, 3, null]
    ])
    expect(new Set(events.map((e) => e.session_id)).size).toBe(2)
    expect(Object.values(state.open).map((s) => s.client_session_id)).toEqual(["run-b"])
    expect(state.usage?.["live:d:2026-03-01"]).toEqual({ cost_usd: 0, tokens_in: 112, tokens_out: 13 })
  })

  it("goes on with a session of a state kept before sessions were per run, and opens other runs apart", () => {
    const first = run([signal({ at: t0, client_session_id: "run-a", metadata: { tokens_in: 1 } })])
    const session = Object.values(first.state.open)[0]
    // As snapshotted by earlier versions: one open session per environment and adapter.
    const legacy: UserState = { ...first.state, open: { "live:claude-code": session! } }
    let state = legacy
    const rows: Array<SessionRow> = []
    for (
      const [i, r] of [
        signal({ at: t0 + 1, client_session_id: "run-a", metadata: { tokens_in: 2 } }),
        signal({ at: t0 + 2, client_session_id: "run-b", metadata: { tokens_in: 4 } })
      ].entries()
    ) {
      const out = fold(state, r, { partition: 0, offset: i + 1 })
      state = out.state
      rows.push(...out.sessions)
    }
    expect(rows.map((s) => [s.id === session!.id, s.client_session_id, s.tokens_in])).toEqual([
      [true, "run-a", 3],
      [false, "run-b", 4]
    ])
    expect(Object.keys(state.open)).not.toContain("live:claude-code")
    expect(Object.values(state.open).map((s) => s.client_session_id).sort()).toEqual(["run-a", "run-b"])
  })

  it("keeps the user's usage of the two latest daily and monthly windows per environment, with their sums", () =>
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            day: fc.integer({ min: 0, max: 70 }),
            environment: fc.constantFrom("live" as const, "test" as const),
            tokens: fc.integer({ min: 0, max: 1000 })
          }),
          { minLength: 1, maxLength: 40 }
        ),
        (steps) => {
          // Days in time order (a user's records are), several signals a day.
          const sorted = [...steps].sort((a, b) => a.day - b.day)
          const records = sorted.map((s, i) => signal({ at: t0 + s.day * 86_400_000 + i, environment: s.environment, metadata: { tokens_in: s.tokens } }))
          const { state } = run(records)
          const expected: Record<string, Usage> = {}
          for (const environment of ["live", "test"] as const) {
            const mine = records.filter((r) => r.kind === "signal" && r.environment === environment) as Array<SignalRecord>
            for (const [kind, length] of [["d", 10], ["m", 7]] as const) {
              const windows = [...new Set(mine.map((r) => r.ts.slice(0, length)))].sort().slice(-2)
              for (const w of windows) {
                const tokens = mine.filter((r) => r.ts.slice(0, length) === w).reduce((n, r) => n + (r.metadata.tokens_in as number), 0)
                expected[`${environment}:${kind}:${w}`] = { cost_usd: 0, tokens_in: tokens, tokens_out: 0 }
              }
            }
          }
          expect(state.usage ?? {}).toEqual(expected)
        }
      ),
      { numRuns: 200 }
    ))

  it("reads timestamps exactly as Date.parse does", () => {
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"))
    // The form the service writes, with every field also out of range, and anything else.
    const shaped = fc.tuple(fc.integer({ min: 0, max: 9999 }), two(14), two(34), two(26), two(62), two(62), fc.integer({ min: 0, max: 999 }))
      .map(([y, mo, d, h, mi, s, ms]) => `${String(y).padStart(4, "0")}-${mo}-${d}T${h}:${mi}:${s}.${String(ms).padStart(3, "0")}Z`)
    const written = fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms).toISOString())
    const other = fc.oneof(fc.string({ maxLength: 30 }), shaped.map((ts) => ts.replace(/\d/, "x")), shaped.map((ts) => ts.slice(0, 23) + "+01:00"))
    fc.assert(
      fc.property(fc.oneof(shaped, written, other), (ts) => {
        expect(instantOf(ts)).toBe(Date.parse(ts))
      }),
      { numRuns: 5_000 }
    )
  })

  it("reuses a user's scope keys only while they are the keys of the next signal", () => {
    // Mostly the same as the user's previous signal, sometimes one thing changes.
    const same = Symbol("same")
    const changes = <A>(values: ReadonlyArray<A>) => fc.oneof({ weight: 6, arbitrary: fc.constant(same) }, { weight: 1, arbitrary: fc.constantFrom(...values) })
    const stepArb = fc.record({
      user: fc.constantFrom("u1", "u1", "u1", "u2"),
      org: changes(["org_1", "org_2"]),
      environment: changes(["live", "test"] as const),
      zone: changes([undefined, "UTC", "Asia/Kathmandu", "Australia/Eucla", "America/St_Johns"]),
      teams: changes([undefined, ["team_1"], ["team_1", "team_2"], ["team_2", "team_1"]]),
      project: changes([undefined, "", "proj_1", "proj_2"]),
      // Small steps, so local midnights (on quarter and half hours of UTC in these zones) are crossed closely.
      gapS: fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 90 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 40_000 }) })
    })
    const pick = <A>(value: A | typeof same, before: A): A => (value === same ? before : value)
    fc.assert(
      fc.property(
        fc.constantFrom("2026-03-31T17:50:00.000Z", "2026-03-31T14:50:00.000Z", "2026-03-31T01:50:00.000Z"),
        fc.array(stepArb, { minLength: 1, maxLength: 120 }),
        (start, steps) => {
          const keys = makeScopeKeys()
          const last = new Map<
            string,
            { org: string; environment: "live" | "test"; zone: string | undefined; teams: Array<string> | undefined; project: string | undefined }
          >()
          let at = Date.parse(start)
          for (const step of steps) {
            at += step.gapS * 1000
            const before = last.get(step.user) ?? { org: "org_1", environment: "live" as const, zone: "Asia/Kathmandu", teams: undefined, project: "proj_1" }
            const now = {
              org: pick(step.org, before.org),
              environment: pick(step.environment, before.environment),
              zone: pick(step.zone, before.zone),
              teams: pick(step.teams, before.teams),
              project: pick(step.project, before.project)
            }
            last.set(step.user, now)
            const r = signal({
              at,
              user_id: step.user,
              org_id: now.org,
              environment: now.environment,
              ...(now.zone ? { time_zone: now.zone } : {}),
              // A new array each time, as records decoded from the log have.
              ...(now.teams ? { team_ids: [...now.teams] } : {}),
              metadata: now.project === undefined ? {} : { project_id: now.project }
            })
            const project = now.project ?? null
            expect(keys.keysOf(r, project)).toEqual(scopeKeysOf(r, project))
          }
        }
      ),
      { numRuns: 500 }
    )
  })
})
