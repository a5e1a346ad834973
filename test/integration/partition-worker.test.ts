import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import type { LogRecord } from "../../src/domain/records.ts"
import { addUsage, noUsage, type Usage } from "../../src/domain/rule-evaluation.ts"
import { scopeKey, scopeKeysOf } from "../../src/domain/scope-usage.ts"
import type { EventRow, GoalRow, SessionRow } from "../../src/domain/projection-rows.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import type { SignalType } from "../../src/domain/signals.ts"
import { type OutboxEvent, toOutboxEvent } from "../../src/domain/notices.ts"
import { makePartitionWorker } from "../../src/engine/partition-worker.ts"
import type { LogEntry } from "../../src/log/signal-log.ts"
import { signalAt as signal } from "../support/log-records.ts"
import { memoryProjections } from "../support/memory-projections.ts"

// The worker's property runs hundreds of generated logs through the engine's batching, caching
// and fencing (seconds of work): too slow for the unit tier, though it needs no service.
const t0 = Date.parse("2026-03-01T09:00:00.000Z")
const iso = (ms: number) => new Date(ms).toISOString()

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
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("signal" as const),
      user: fc.nat(users.length - 1),
      gapS: fc.oneof(fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1700, max: 4000 })),
      type: fc.nat(types.length - 1),
      adapter: fc.nat(1),
      tokens: fc.oneof(fc.nat(5000), fc.integer({ min: 20_000, max: 90_000 })),
      prompt: fc.nat(prompts.length - 1),
      team: fc.boolean(),
      project: fc.nat(2)
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tick" as const), user: fc.nat(users.length - 1), stale: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("goal" as const),
      user: fc.nat(users.length - 1),
      goal: fc.nat(2),
      create: fc.boolean(),
      status: fc.nat(statuses.length - 1),
      text: fc.nat(goalTexts.length - 1)
    })
  }
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
        v: 1,
        kind: "goal",
        org_id: "org_1",
        environment: "live",
        user_id: user,
        ts: iso(clock),
        command_id: `gcmd_${entries.length}`,
        goal_id: `goal_${user}_${step.goal}`,
        ...(step.create
          ? { op: "create" as const, description: goalTexts[step.text]! }
          : { op: "update" as const, status: statuses[step.status]!, ...(step.text === 0 ? { description: goalTexts[1]! } : {}) })
      }
    } else {
      const open = Object.values(state.open)[0]
      if (!open) continue
      record = {
        v: 1,
        kind: "session-timeout",
        org_id: "org_1",
        environment: "live",
        user_id: user,
        ts: iso(clock),
        session_id: open.id,
        last_activity_at: step.stale ? iso(Date.parse(open.last_activity_at) - 1) : open.last_activity_at
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
          fc.array(
            fc.record({
              size: fc.integer({ min: 1, max: 12 }),
              then: fc.constantFrom<Disruption>("none", "none", "restart", "evict", "fail", "takeover"),
              redeliver: fc.boolean()
            }),
            { minLength: 1, maxLength: 30 }
          ),
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
            expectProjected(store, entries)
          }
        ),
        { numRuns: 300 }
      )
    )))

  it(
    "projects the same with its commits written behind its verdicts, across crashes in the gap, failed commits, restarts and takeovers",
    { timeout: 300_000 },
    () =>
      Effect.runPromise(Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(stepArb, { minLength: 1, maxLength: 80 }),
            fc.array(
              fc.record({
                size: fc.integer({ min: 1, max: 12 }),
                then: fc.constantFrom<Disruption | "crash">("none", "none", "restart", "evict", "fail", "crash", "takeover"),
                redeliver: fc.boolean()
              }),
              { minLength: 1, maxLength: 30 }
            ),
            fc.integer({ min: 1, max: 40 }),
            async (steps, plan, maxLag) => {
              const entries = buildLog(steps)
              const store = memoryProjections()
              const program = Effect.gen(function*() {
                const reread = (from: number, until: number) => Effect.succeed(entries.filter((e) => e.offset >= from && e.offset < until))
                const start = makePartitionWorker({ log: "test", partition: 0, timers: true, writeBehind: { maxLag, reread } })
                let worker = yield* start
                const live = [worker]
                let i = 0
                let p = 0
                /** Where the owner after the last crash started. */
                let crashedAt = -1
                while (i < entries.length) {
                  const step = plan[p++ % plan.length]!
                  // A stale owner's consumer goes on from where it is, not from where the log is.
                  const from = Math.min(step.redeliver ? Math.max(0, i - 3) : i, worker.nextOffset())
                  if (step.then === "fail") store.failCommits(1)
                  const done = yield* Effect.exit(worker.process(entries.slice(from, i + step.size), t0))
                  if (done._tag === "Failure") {
                    // Taken over: the partition is let go, and the log delivers it again from the
                    // stored offset to its next owner.
                    yield* worker.close()
                    worker = yield* start
                    live.push(worker)
                    i = worker.nextOffset()
                    continue
                  }
                  i = Math.min(entries.length, i + step.size)
                  if (step.then === "restart") {
                    // Let go (it commits what it folded, unless fenced), then owned again: the log
                    // delivers the partition from the stored offset.
                    yield* worker.close()
                    worker = yield* start
                    live.push(worker)
                    i = worker.nextOffset()
                  }
                  if (step.then === "crash") {
                    // Killed in the gap: what was folded and not committed is gone; the next owner
                    // reads the log again from the stored offset. A plan repeats, and one whose every
                    // commit fails before its crash would never get on: a crash with nothing
                    // committed since the last lets the partition go cleanly instead.
                    yield* worker.close(worker.committedOffset() > crashedAt ? 0 : undefined)
                    worker = yield* start
                    live.push(worker)
                    i = worker.nextOffset()
                    crashedAt = i
                  }
                  if (step.then === "evict") worker.evictIdle(t0 + 1, 0)
                  if (step.then === "takeover" && i < entries.length) {
                    const other = yield* start
                    live.push(other)
                    yield* other.process(entries.slice(other.nextOffset(), i + step.size), t0)
                    yield* other.settle
                    i = Math.min(entries.length, i + step.size)
                  }
                }
                // Every owner, stale ones too, done writing (a stale one is fenced, and resyncs).
                for (const w of live) yield* w.settle
                for (const w of live) yield* w.close(0)
              }).pipe(Effect.provide(store.layer))
              await Effect.runPromise(program)
              expectProjected(store, entries)
            }
          ),
          { numRuns: 200 }
        )
      ))
  )
})

const expectProjected = (store: ReturnType<typeof memoryProjections>, entries: ReadonlyArray<LogEntry>) => {
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
