import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { observeTokens } from "../../src/domain/anomaly.ts"
import { bestGoal, similarity, terms } from "../../src/domain/drift-lexical.ts"
import type { GoalStatus } from "../../src/domain/goals.ts"
import type { GoalRecord, LogRecord, SignalRecord } from "../../src/domain/records.ts"
import { noTargets } from "../../src/domain/recipients.ts"
import type { Rule } from "../../src/domain/rules.ts"
import type { FoldResult } from "../../src/domain/fold-result.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { defaultFoldSettings, emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import { makePartitionWorker } from "../../src/engine/partition-worker.ts"
import type { RuleCache } from "../../src/engine/rule-cache.ts"
import type { Verdict } from "../../src/domain/verdict.ts"
import type { LogEntry } from "../../src/log/signal-log.ts"
import { memoryProjections } from "../support/memory-projections.ts"

let seq = 0
const id = () => (++seq).toString(16).padStart(32, "0")
const signal = (over: Partial<SignalRecord> = {}): SignalRecord => ({
  v: 1,
  kind: "signal",
  org_id: "org_1",
  environment: "live",
  user_id: "user_a",
  ts: "2026-11-22T10:00:00.000Z",
  signal_id: `sig_${id()}`,
  type: "post-tool",
  adapter: "claude-code",
  client_session_id: "cs",
  metadata: {},
  session_timeout_s: 1800,
  cost: { usd: 0, estimated: false, model_known: true },
  ...over
})
const prompt = (text: string, over: Partial<SignalRecord> = {}) => signal({ type: "user-prompt", metadata: { prompt: text }, ...over })
const goal = (over: Partial<GoalRecord> & Pick<GoalRecord, "op" | "goal_id">): GoalRecord => ({
  v: 1,
  kind: "goal",
  org_id: "org_1",
  environment: "live",
  user_id: "user_a",
  ts: "2026-11-22T09:00:00.000Z",
  command_id: `gcmd_${id()}`,
  ...over
})

const foldAll = (records: ReadonlyArray<LogRecord>, start: UserState = emptyUserState) => {
  let state = start
  const results: Array<FoldResult> = []
  records.forEach((r, offset) => {
    const out = fold(state, r, { partition: 0, offset })
    state = out.state
    results.push(out)
  })
  return { state, results }
}

describe("goals in the fold", () => {
  const statuses: ReadonlyArray<GoalStatus> = ["active", "completed", "abandoned"]
  const allowed: Record<GoalStatus, ReadonlyArray<GoalStatus>> = {
    active: ["completed", "abandoned"],
    completed: ["active"],
    abandoned: ["active"]
  }
  const into = (status: GoalStatus) => {
    const records: Array<GoalRecord> = [goal({ op: "create", goal_id: "goal_1", description: "Ship the billing page" })]
    if (status !== "active") records.push(goal({ op: "update", goal_id: "goal_1", status, ts: "2026-11-22T09:30:00.000Z" }))
    return foldAll(records).state
  }

  it.each(statuses.flatMap((from) => statuses.map((to) => [from, to] as const)))("%s → %s", (from, to) => {
    const out = fold(into(from), goal({ op: "update", goal_id: "goal_1", status: to, ts: "2026-11-22T10:00:00.000Z" }), { partition: 0, offset: 9 })
    if (allowed[from].includes(to)) {
      expect(out.goalOutcome).toMatchObject({ _tag: "Goal", goal: { id: "goal_1", status: to, updated_at: "2026-11-22T10:00:00.000Z" } })
      expect(out.goals).toEqual([expect.objectContaining({ id: "goal_1", status: to, user_id: "user_a", org_id: "org_1" })])
    } else {
      expect(out.goalOutcome).toMatchObject({ _tag: "Refused", refusal: { status: 409, code: "invalid_transition" } })
      expect(out.state).toEqual(into(from))
      expect(out.goals ?? []).toEqual([])
    }
  })

  it("creates active goals, keeps the adapter, changes descriptions, and refuses what names no goal of the environment", () => {
    const { state, results } = foldAll([
      goal({ op: "create", goal_id: "goal_1", description: "Ship the billing page", adapter: "cursor" }),
      goal({ op: "update", goal_id: "goal_1", description: "Ship the billing and invoices pages", ts: "2026-11-22T09:10:00.000Z" }),
      goal({ op: "update", goal_id: "goal_nope", status: "completed" }),
      goal({ op: "update", goal_id: "goal_1", status: "completed", environment: "test" }),
      goal({ op: "create", goal_id: "goal_1", description: "a redelivered create changes nothing" })
    ])
    expect(results[0]!.goalOutcome).toEqual({
      _tag: "Goal",
      command_id: expect.any(String),
      goal: { id: "goal_1", description: "Ship the billing page", status: "active", adapter: "cursor", created_at: "2026-11-22T09:00:00.000Z" }
    })
    expect(results[1]!.goalOutcome).toMatchObject({ goal: { description: "Ship the billing and invoices pages", updated_at: "2026-11-22T09:10:00.000Z" } })
    expect(results[2]!.goalOutcome).toMatchObject({ _tag: "Refused", refusal: { status: 404 } })
    expect(results[3]!.goalOutcome).toMatchObject({ _tag: "Refused", refusal: { status: 404 } })
    expect(results[4]!.goalOutcome).toMatchObject({ goal: { description: "Ship the billing and invoices pages" } })
    expect(state.goals?.goal_1?.status).toBe("active")
  })

  it("keeps the 100 most recently closed goals: an older one can no longer be reopened", () => {
    const at = (minute: number) => new Date(Date.parse("2026-11-22T00:00:00.000Z") + minute * 60_000).toISOString()
    const records: Array<GoalRecord> = []
    for (let i = 0; i < 101; i++) {
      records.push(goal({ op: "create", goal_id: `goal_${i}`, description: `goal ${i}`, ts: at(2 * i) }))
      records.push(goal({ op: "update", goal_id: `goal_${i}`, status: "completed", ts: at(2 * i + 1) }))
    }
    const { state } = foldAll(records)
    expect(Object.keys(state.goals ?? {})).toHaveLength(100)
    expect(state.goals?.goal_0).toBeUndefined()
    const old = fold(state, goal({ op: "update", goal_id: "goal_0", status: "active", ts: at(300) }), { partition: 0, offset: 300 })
    expect(old.goalOutcome).toMatchObject({ _tag: "Refused", refusal: { status: 404, code: "not_found" } })
    const recent = fold(state, goal({ op: "update", goal_id: "goal_1", status: "active", ts: at(300) }), { partition: 0, offset: 300 })
    expect(recent.goalOutcome).toMatchObject({ _tag: "Goal", goal: { id: "goal_1", status: "active" } })
  })
})

describe("goal drift", () => {
  it("scores with the overlap of terms, prefixes of four or more characters matching", () => {
    expect(terms("Fixing the Login bugs, in auth!")).toEqual(["fix", "login", "bug", "auth"])
    expect(similarity(terms("fix the auth login"), terms("Fix authentication login bugs"))).toBe(1)
    expect(similarity(terms("write a poem about autumn leaves"), terms("Fix authentication login bugs"))).toBe(0)
    expect(bestGoal("the invoice totals are wrong", [
      { id: "g1", description: "Fix authentication login bugs" },
      { id: "g2", description: "Refactor the billing invoice module" }
    ])).toEqual({ goalId: "g2", score: 0.333 })
    expect(bestGoal("ok", [{ id: "g1", description: "anything" }])).toBeUndefined()
  })

  const setUp = () => foldAll([goal({ op: "create", goal_id: "goal_1", description: "Fix authentication login bugs" })]).state

  it("reports a drift once when the configured number of consecutive prompts are off-goal", () => {
    const { results } = foldAll([
      prompt("write a poem about autumn"),
      prompt("what is the capital of peru"),
      prompt("recommend some jazz records"),
      prompt("and some more jazz records please")
    ], setUp())
    expect(results.map((r) => r.drift?.goal_id)).toEqual([undefined, undefined, "goal_1", undefined])
    expect(results[2]!.drift).toMatchObject({ score: 0, off_goal_prompts: defaultFoldSettings.drift.prompts })
  })

  it("an on-goal prompt or a refocus-ack resets the streak; signals without a prompt and prompts without goals do not count", () => {
    const { results } = foldAll([
      prompt("write a poem about autumn"),
      prompt("what is the capital of peru"),
      prompt("why does the login fail for sso users"),
      prompt("recommend some jazz records"),
      signal({ type: "post-tool" }),
      prompt("recommend some blues records"),
      signal({ type: "refocus-ack" }),
      prompt("tell me a joke"),
      prompt("tell me another joke"),
      signal({ type: "context-switch", metadata: { description: "planning the team offsite" } })
    ], setUp())
    expect(results.map((r) => r.drift !== undefined)).toEqual([false, false, false, false, false, false, false, false, false, true])
    expect(foldAll([prompt("a"), prompt("write a poem"), prompt("write a song"), prompt("write a novel")]).results.every((r) => !r.drift)).toBe(true)
  })

  it("the partition worker turns a drift into a goal-drift signal of the user, live only (replay finds it in the log)", () =>
    Effect.gen(function*() {
      const records: Array<LogRecord> = [
        goal({ op: "create", goal_id: "goal_1", description: "Fix authentication login bugs" }),
        prompt("write a poem about autumn"),
        prompt("what is the capital of peru"),
        prompt("recommend some jazz records")
      ]
      const entries: Array<LogEntry> = records.map((record, offset) => ({ partition: 0, offset, key: "user_a", record }))
      const live = memoryProjections()
      const out = yield* Effect.flatMap(makePartitionWorker({ log: "l", partition: 0, timers: true }), (w) =>
        w.process(entries, Date.parse("2026-11-22T10:00:05.000Z")))
        .pipe(Effect.provide(live.layer))
      expect(out.drifts).toHaveLength(1)
      expect(out.drifts[0]).toMatchObject({
        kind: "signal",
        type: "goal-drift",
        user_id: "user_a",
        org_id: "org_1",
        adapter: "claude-code",
        client_session_id: "cs",
        ts: "2026-11-22T10:00:05.000Z",
        metadata: { goal_id: "goal_1", score: 0, off_goal_prompts: 3, source: "engine", prompt_signal_id: (records[3] as SignalRecord).signal_id }
      })
      const replay = memoryProjections()
      const replayed = yield* Effect.flatMap(makePartitionWorker({ log: "l", partition: 0, timers: false, notify: false }), (w) =>
        w.process(entries, 0))
        .pipe(Effect.provide(replay.layer))
      expect(replayed.drifts).toEqual([])
    }).pipe(Effect.runPromise))
})

describe("token_spike", () => {
  it("needs a baseline of a few signals, then reports an observation above factor × baseline", () => {
    let baseline = undefined as ReturnType<typeof observeTokens>["baseline"] | undefined
    const spikes = []
    for (const observed of [100, 100, 100, 100, 100, 1000, 100]) {
      const out = observeTokens(baseline, observed, { factor: 3, minSamples: 5, window: 20 })
      baseline = out.baseline
      spikes.push(out.spike)
    }
    expect(spikes.slice(0, 5)).toEqual([undefined, undefined, undefined, undefined, undefined])
    expect(spikes[5]).toEqual({ baseline_avg: 100, observed: 1000, deviation_pct: 900 })
    expect(spikes[6]).toBeUndefined()
    // Too few observations: even a huge one is no spike.
    expect(observeTokens({ avg: 10, n: 2 }, 10_000, { factor: 3, minSamples: 5, window: 20 }).spike).toBeUndefined()
  })

  it("the fold records anomaly.detected with the spec's fields, in the signal's session", () => {
    const tokens = [100, 120, 80, 100, 100, 900]
    const { results } = foldAll(tokens.map((t) => signal({ metadata: { tokens_in: t } })))
    const anomalies = results.flatMap((r) => r.notices.filter((n) => n.type === "anomaly.detected"))
    expect(anomalies).toHaveLength(1)
    expect(anomalies[0]!.data).toEqual({
      anomaly_type: "token_spike",
      user_id: "user_a",
      baseline_avg: 100,
      observed: 900,
      deviation_pct: 800,
      session_id: results[5]!.sessionId
    })
  })
})

describe("budget windows through the partition worker", () => {
  const budget: Rule = {
    id: "rule_1",
    name: "daily",
    type: "budget",
    enabled: true,
    scope: "user",
    scope_id: "user_a",
    priority: 100,
    condition: { window: "daily", metric: "tokens_total", threshold: 100 },
    action: "block",
    action_config: { message: "spent" },
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-01T00:00:00.000Z"
  }
  const rules: RuleCache["Service"] = {
    rulesFor: () => [budget],
    watched: () => false,
    targetsOf: () => noTargets,
    refresh: Effect.void,
    version: () => 0,
    catchUp: () => Effect.void
  }

  it.each(
    [
      // New York is UTC-5 in November: its day starts at 05:00 UTC.
      ["UTC", ["2026-11-22T20:00:00.000Z", "2026-11-22T23:59:59.999Z", "2026-11-23T00:00:00.000Z"]],
      ["America/New_York", ["2026-11-23T01:00:00.000Z", "2026-11-23T04:59:59.999Z", "2026-11-23T05:00:00.000Z"]]
    ] as const
  )("a spent daily budget blocks until local midnight (%s)", (timeZone, [spend, before, after]) =>
    Effect.gen(function*() {
      const store = memoryProjections()
      const worker = yield* makePartitionWorker({ log: "l", partition: 0, timers: false, rules }).pipe(Effect.provide(store.layer))
      const zone = timeZone === "UTC" ? {} : { time_zone: timeZone }
      const records = [
        signal({ ts: spend, metadata: { tokens_in: 150 }, ...zone }),
        signal({ ts: before, metadata: { tokens_in: 1 }, ...zone }),
        signal({ ts: after, metadata: { tokens_in: 1 }, ...zone }),
        signal({ ts: after, metadata: { tokens_in: 1 }, ...zone })
      ]
      const verdicts: Array<Verdict> = []
      for (const [offset, record] of records.entries()) {
        const out = yield* worker.process([{ partition: 0, offset, key: "user_a", record }], 0).pipe(Effect.provide(store.layer))
        verdicts.push(...(out.outcomes as ReadonlyArray<Verdict>))
      }
      expect(verdicts.map((v) => v.ok)).toEqual([true, false, true, true])
      expect(verdicts[1]).toMatchObject({ action: "block", rule_id: "rule_1", message: "spent" })
    }).pipe(Effect.runPromise))
})
