import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import type { LogRecord, SignalRecord } from "../../src/domain/records.ts"
import { addUsage, noUsage, type Usage } from "../../src/domain/rule-evaluation.ts"
import { makeScopeKeys, scopeKey, scopeKeysOf } from "../../src/domain/scope-usage.ts"
import { instantOf } from "../../src/domain/instants.ts"
import type { EventRow, GoalRow, SessionRow } from "../../src/domain/projection-rows.ts"
import { fold, maxOpenSessions } from "../../src/domain/sessionizer.ts"
import { emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import type { SignalType } from "../../src/domain/signals.ts"
import { makePartitionWorker } from "../../src/engine/partition-worker.ts"
import { type OutboxEvent, toOutboxEvent } from "../../src/domain/webhooks.ts"
import type { LogEntry } from "../../src/log/signal-log.ts"
import { memoryProjections } from "../support/memory-projections.ts"

const t0 = Date.parse("2026-03-01T09:00:00.000Z")
const iso = (ms: number) => new Date(ms).toISOString()
let seq = 0
const signal = (over: Partial<SignalRecord> & { readonly at: number }): SignalRecord => {
  const { at, ...rest } = over
  seq++
  return {
    v: 1,
    kind: "signal",
    org_id: "org_1",
    environment: "live",
    user_id: "user_a",
    ts: iso(at),
    signal_id: `sig_${seq.toString(16).padStart(32, "0")}`,
    type: "post-tool",
    adapter: "claude-code",
    client_session_id: "cs-1",
    metadata: {},
    session_timeout_s: 1800,
    cost: { usd: 0, estimated: false, model_known: false },
    ...rest
  }
}

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

describe("sessionizer", () => {
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
      signal({ at: t0 + 1000, metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 20, project_id: "proj_x" }, cost: { usd: 0.0006, estimated: true, model_known: true } }),
      signal({ at: t0 + 2000, metadata: { model: "gpt-4o", tokens_in: 10, tokens_out: 5, error_code: "rate_limited", latency_ms: 812 }, cost: { usd: 0.5, estimated: false, model_known: true } }),
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
      v: 1, kind: "session-timeout", org_id: "org_1", environment: "live", user_id: "user_a",
      ts: iso(t0 + 2_000_000), session_id: sessionId, last_activity_at: iso(last)
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

  it("keeps the user's usage of the two latest daily and monthly windows per environment, with their sums", () =>
    fc.assert(
      fc.property(
        fc.array(fc.record({
          day: fc.integer({ min: 0, max: 70 }),
          environment: fc.constantFrom("live" as const, "test" as const),
          tokens: fc.integer({ min: 0, max: 1000 })
        }), { minLength: 1, maxLength: 40 }),
        (steps) => {
          // Days in time order (a user's records are), several signals a day.
          const sorted = [...steps].sort((a, b) => a.day - b.day)
          const records = sorted.map((s, i) =>
            signal({ at: t0 + s.day * 86_400_000 + i, environment: s.environment, metadata: { tokens_in: s.tokens } }))
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
    const changes = <A>(values: ReadonlyArray<A>) =>
      fc.oneof({ weight: 6, arbitrary: fc.constant(same) }, { weight: 1, arbitrary: fc.constantFrom(...values) })
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
          const last = new Map<string, { org: string; environment: "live" | "test"; zone: string | undefined; teams: Array<string> | undefined; project: string | undefined }>()
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

// ---------------------------------------------------------------------------------------------
// Property: the partition worker, whatever the batch boundaries, restarts, evictions and failed
// commits, persists exactly what a plain sequential fold of the log produces.

const users = ["u1", "u2", "u3", "u4", "u5"]
const types: ReadonlyArray<SignalType> = ["user-prompt", "post-tool", "session-start", "session-end", "stop", "refocus-ack"]
const prompts = ["fix the login bug in auth", "write a poem about autumn", "refactor billing invoices", "deploy the cluster"]
const goalTexts = ["Fix authentication login bugs", "Refactor the billing invoice module"]
const statuses = ["active", "completed", "abandoned"] as const

type Step =
  | {
    readonly kind: "signal"
    readonly user: number
    readonly gapS: number
    readonly type: number
    readonly adapter: number
    readonly tokens: number
    readonly prompt: number
    readonly team: boolean
    readonly project: number
  }
  | { readonly kind: "tick"; readonly user: number; readonly stale: boolean }
  | { readonly kind: "goal"; readonly user: number; readonly goal: number; readonly create: boolean; readonly status: number; readonly text: number }

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({
    kind: fc.constant("signal" as const),
    user: fc.nat(users.length - 1),
    gapS: fc.oneof(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1700, max: 4000 })),
    type: fc.nat(types.length - 1),
    adapter: fc.nat(1),
    tokens: fc.oneof(fc.nat(5000), fc.integer({ min: 20_000, max: 90_000 })),
    prompt: fc.nat(prompts.length - 1),
    team: fc.boolean(),
    project: fc.nat(2)
  }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const), user: fc.nat(users.length - 1), stale: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({
    kind: fc.constant("goal" as const),
    user: fc.nat(users.length - 1),
    goal: fc.nat(2),
    create: fc.boolean(),
    status: fc.nat(statuses.length - 1),
    text: fc.nat(goalTexts.length - 1)
  }) }
)

/** Turns steps into a log, using a reference fold to aim ticks at real (or deliberately stale) sessions. */
const buildLog = (steps: ReadonlyArray<Step>): ReadonlyArray<LogEntry> => {
  const states = new Map<string, UserState>()
  const entries: Array<LogEntry> = []
  let clock = t0
  for (const step of steps) {
    const user = users[step.user]!
    const state = states.get(user) ?? emptyUserState
    let record: LogRecord | undefined
    if (step.kind === "signal") {
      clock += step.gapS * 1000
      record = signal({
        at: clock,
        user_id: user,
        type: types[step.type]!,
        adapter: step.adapter === 0 ? "claude-code" : "cursor",
        metadata: {
          tokens_in: step.tokens,
          tokens_out: step.tokens >> 2,
          model: step.tokens % 2 === 0 ? "gpt-4o" : "claude-sonnet-4",
          prompt: prompts[step.prompt],
          ...(step.project > 0 ? { project_id: `proj_${step.project}` } : {})
        },
        cost: { usd: step.tokens / 1e6, estimated: true, model_known: true },
        ...(step.team ? { team_ids: ["team_1", "team_2"] } : {}),
        ...(step.user % 2 === 0 ? { time_zone: "America/New_York" } : {})
      })
    } else if (step.kind === "goal") {
      clock += 1000
      record = {
        v: 1, kind: "goal", org_id: "org_1", environment: "live", user_id: user, ts: iso(clock),
        command_id: `gcmd_${entries.length}`, goal_id: `goal_${user}_${step.goal}`,
        ...(step.create
          ? { op: "create" as const, description: goalTexts[step.text]! }
          : { op: "update" as const, status: statuses[step.status]!, ...(step.text === 0 ? { description: goalTexts[1]! } : {}) })
      }
    } else {
      const open = Object.values(state.open)[0]
      if (!open) continue
      record = {
        v: 1, kind: "session-timeout", org_id: "org_1", environment: "live", user_id: user, ts: iso(clock),
        session_id: open.id, last_activity_at: step.stale ? iso(Date.parse(open.last_activity_at) - 1) : open.last_activity_at
      }
    }
    const offset = entries.length
    states.set(user, fold(state, record, { partition: 0, offset }).state)
    entries.push({ partition: 0, offset, key: user, record })
  }
  return entries
}

const reference = (entries: ReadonlyArray<LogEntry>) => {
  const states = new Map<string, UserState>()
  const goals = new Map<string, GoalRow>()
  const scopeUsage = new Map<string, Usage>()
  const sessions = new Map<string, SessionRow>()
  const events = new Map<string, EventRow>()
  const notices = new Map<string, OutboxEvent>()
  for (const e of entries) {
    const out = fold(states.get(e.key) ?? emptyUserState, e.record, e)
    states.set(e.key, out.state)
    for (const s of out.sessions) sessions.set(s.id, s)
    for (const g of out.goals ?? []) goals.set(g.id, g)
    if (e.record.kind === "signal") {
      const r = e.record
      const add = { cost_usd: r.cost.usd, tokens_in: Number(r.metadata.tokens_in), tokens_out: Number(r.metadata.tokens_out) }
      // A signal counts in the project its event is listed under (its own, else its session's).
      const project = out.events.find((ev) => ev.signal_id === r.signal_id)?.project_id ?? null
      for (const key of scopeKeysOf(r, project)) scopeUsage.set(key, addUsage(scopeUsage.get(key) ?? noUsage, add))
    }
    for (const ev of out.events) events.set(ev.id, ev)
    for (const n of out.notices) {
      const o = toOutboxEvent(n)
      if (!notices.has(o.id)) notices.set(o.id, o)
    }
  }
  return { sessions, events, notices, goals, scopeUsage }
}

type Disruption = "none" | "restart" | "evict" | "fail" | "takeover"

describe("partition worker", () => {
  it("projects exactly what a sequential fold does, across batches, restarts, evictions, failed commits and takeovers", () =>
    Effect.runPromise(Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(stepArb, { minLength: 1, maxLength: 80 }),
          fc.array(fc.record({ size: fc.integer({ min: 1, max: 12 }), then: fc.constantFrom<Disruption>("none", "none", "restart", "evict", "fail", "takeover"), redeliver: fc.boolean() }), { minLength: 1, maxLength: 30 }),
          async (steps, plan) => {
            const entries = buildLog(steps)
            const store = memoryProjections()
            const program = Effect.gen(function*() {
              let worker = yield* makePartitionWorker({ log: "test", partition: 0, timers: true })
              let i = 0
              let p = 0
              while (i < entries.length) {
                const step = plan[p++ % plan.length]!
                // At-least-once delivery: a batch may start before what was already projected.
                const from = step.redeliver ? Math.max(0, i - 3) : i
                const batch = entries.slice(from, i + step.size)
                if (step.then === "fail") store.failCommits(1)
                yield* worker.process(batch, t0)
                i = Math.min(entries.length, i + step.size)
                if (step.then === "restart") worker = yield* makePartitionWorker({ log: "test", partition: 0, timers: true })
                if (step.then === "evict") worker.evictIdle(t0 + 1, 0)
                if (step.then === "takeover" && i < entries.length) {
                  // Another owner takes the partition and commits the next batch; the old owner,
                  // unaware, carries on and must be fenced off rather than project twice.
                  const other = yield* makePartitionWorker({ log: "test", partition: 0, timers: true })
                  yield* other.process(entries.slice(i, i + step.size), t0)
                  i = Math.min(entries.length, i + step.size)
                }
              }
            }).pipe(Effect.provide(store.layer))
            await Effect.runPromise(program)
            const expected = reference(entries)
            expect(Object.fromEntries(store.sessions)).toEqual(Object.fromEntries(expected.sessions))
            expect(Object.fromEntries(store.events)).toEqual(Object.fromEntries(expected.events))
            // Webhook events: one per session start and end, never two for one cause.
            expect(Object.fromEntries(store.notices)).toEqual(Object.fromEntries(expected.notices))
            expect(Object.fromEntries(store.goals)).toEqual(Object.fromEntries(expected.goals))
            // Shared-scope counts: the partition's absolute count of every scope and window touched.
            const counted = new Map([...store.scopeUsage.values()].map((u) => [
              scopeKey(u.org_id, u.environment, u.scope, u.scope_id, u.window_key),
              { cost_usd: u.cost_usd, tokens_in: u.tokens_in, tokens_out: u.tokens_out }
            ]))
            expect(Object.fromEntries(counted)).toEqual(Object.fromEntries(expected.scopeUsage))
            const starts = [...expected.notices.values()].filter((n) => n.type === "session.started").length
            const ends = [...expected.notices.values()].filter((n) => n.type === "session.ended").length
            expect(starts).toBe(expected.sessions.size)
            expect(ends).toBe([...expected.sessions.values()].filter((s) => s.ended_at !== null).length)
          }
        ),
        { numRuns: 300 }
      )
    )))
})
