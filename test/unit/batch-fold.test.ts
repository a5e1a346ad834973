import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { type BatchContext, type Entry, foldBatch, scopeUsageRows } from "../../src/domain/batch-fold.ts"
import type { RuleView } from "../../src/domain/judge.ts"
import { eventIdFor, type EventRow, type SessionRow } from "../../src/domain/projection-rows.ts"
import type { SignalRecord } from "../../src/domain/records.ts"
import type { Usage } from "../../src/domain/rule-evaluation.ts"
import type { Rule } from "../../src/domain/rules.ts"
import { makeScopeKeys, scopeKey } from "../../src/domain/scope-usage.ts"
import type { SignalType } from "../../src/domain/signals.ts"
import { defaultFoldSettings, emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import { type KnownEvent, type Outcome, outcomeId, type Verdict } from "../../src/domain/verdict.ts"
import type { OutboxEvent } from "../../src/domain/notices.ts"
import { signalAt } from "../support/log-records.ts"

/**
 * The batch fold without a database: a log of signals (some sent with idempotency keys and
 * retried), cut into batches anywhere, must come to what one batch comes to, as the worker
 * commits them (states, counts, stored events and reported levels carried from batch to batch).
 */

const t0 = Date.parse("2026-03-02T08:00:00.000Z")
const users = ["user_a", "user_b", "user_c"] as const

const rule = (id: string, over: Partial<Rule>): Rule => ({
  id,
  name: id,
  type: "budget",
  enabled: true,
  scope: "org",
  scope_id: "org_1",
  priority: 100,
  condition: { window: "daily", metric: "tokens_in", threshold: 2_000 },
  action: "warn",
  action_config: { message: `${id} fired` },
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  ...over
})

/** An org budget that warns (shared), a team budget that blocks (shared), a per-user limit that blocks. */
const rules: ReadonlyArray<Rule> = [
  rule("rule_org", {}),
  rule("rule_team", { scope: "team", scope_id: "team_1", action: "block", condition: { window: "daily", metric: "tokens_in", threshold: 1_200 } }),
  rule("rule_user", { type: "user_limit", action: "block", condition: { window: "daily", metric: "tokens_total", per_user: 500 } })
]
const ruleView: RuleView = { rulesFor: () => rules, watched: (_o, _e, scope) => scope !== "project" }

interface Step {
  readonly user: number
  readonly type: SignalType
  readonly tokens: number
  readonly gapMinutes: number
  readonly keyed: boolean
  /** Repeat an earlier keyed signal (a client's retry), by how far back among them. */
  readonly retry: number | null
}

const step: fc.Arbitrary<Step> = fc.record({
  user: fc.integer({ min: 0, max: users.length - 1 }),
  type: fc.constantFrom<SignalType>("user-prompt", "post-tool", "post-tool", "pre-tool", "session-end"),
  tokens: fc.integer({ min: 0, max: 300 }),
  gapMinutes: fc.constantFrom(0, 1, 5, 45, 60 * 20),
  keyed: fc.boolean(),
  retry: fc.option(fc.nat({ max: 5 }), { freq: 4 })
})

/** The log the steps make: partition 0, offsets from 0. */
const logOf = (steps: ReadonlyArray<Step>): ReadonlyArray<Entry> => {
  const entries: Array<Entry> = []
  const keyed: Array<SignalRecord> = []
  let at = t0
  steps.forEach((s, i) => {
    at += s.gapMinutes * 60_000
    const earlier = s.retry === null ? undefined : keyed[keyed.length - 1 - (s.retry % Math.max(keyed.length, 1))]
    const user = users[s.user]!
    const record: SignalRecord = earlier ?? {
      v: 1,
      kind: "signal",
      org_id: "org_1",
      environment: "live",
      user_id: user,
      team_ids: user === "user_c" ? [] : ["team_1"],
      time_zone: "UTC",
      ts: new Date(at).toISOString(),
      signal_id: `sig_${String(i).padStart(32, "0")}`,
      type: s.type,
      adapter: "claude-code",
      client_session_id: "cs-1",
      metadata: { model: "claude-sonnet-4", tokens_in: s.tokens, tokens_out: Math.floor(s.tokens / 3) },
      session_timeout_s: 1800,
      cost: { usd: s.tokens / 1_000_000, estimated: false, model_known: true },
      ...(s.keyed ? { idempotency_key: `key-${i}` } : {})
    }
    if (earlier === undefined && s.keyed) keyed.push(record)
    entries.push({ partition: 0, offset: entries.length, key: record.user_id, record })
  })
  return entries
}

/** Folds the log in batches cut at `cuts`, committing each as the worker and the projections do. */
const foldInBatches = (
  log: ReadonlyArray<Entry>,
  cuts: ReadonlyArray<number>,
  replay?: { readonly from: number; readonly kept: ReadonlyArray<readonly [string, EventRow]> }
) => {
  const states = new Map<string, UserState>()
  const committed = new Map<string, Usage>()
  const reported = new Set<string>()
  const events = new Map<string, EventRow>(replay?.kept)
  const sessions = new Map<string, SessionRow>()
  const notices = new Map<string, OutboxEvent>()
  const outcomes: Array<Outcome> = []
  const scopeKeys = makeScopeKeys()
  const context: BatchContext = {
    partition: 0,
    settings: defaultFoldSettings,
    rules: ruleView,
    notify: true,
    projectFrom: replay?.from,
    committed: (key) => committed.get(key),
    reportedBefore: (id) => reported.has(id),
    scopeKeys: scopeKeys.keysOf
  }
  const bounds = [...new Set([0, ...cuts.map((c) => c % (log.length + 1)), log.length])].sort((a, b) => a - b)
  for (let i = 0; i + 1 < bounds.length; i++) {
    const batch = log.slice(bounds[i], bounds[i + 1])
    const initial = new Map(batch.map((e) => [e.key, states.get(e.key) ?? emptyUserState]))
    const firsts = new Map<string, KnownEvent>()
    for (const { record } of batch) {
      const stored = record.kind === "signal" ? events.get(eventIdFor(record.signal_id)) : undefined
      if (stored) {
        firsts.set(stored.id, {
          id: stored.id,
          session_id: stored.session_id,
          log_partition: stored.log_partition,
          log_offset: stored.log_offset,
          verdict: stored.verdict ?? null
        })
      }
    }
    const out = foldBatch(batch, initial, firsts, context)
    // The commit: rows are upserted (events and notices keep their first write), then memory moves on.
    for (const s of out.sessions) sessions.set(s.id, s)
    for (const e of out.events) if (!events.has(e.id)) events.set(e.id, e)
    for (const n of out.notices) if (!notices.has(n.id)) notices.set(n.id, n)
    for (const [u, s] of out.states) states.set(u, s)
    for (const [k, c] of out.counts) committed.set(k, { ...c })
    for (const id of out.reported) reported.add(id)
    outcomes.push(...out.outcomes)
  }
  const sorted = <A>(m: Map<string, A>) => [...m.entries()].sort(([a], [b]) => a.localeCompare(b))
  return {
    outcomes,
    states: sorted(states),
    counts: sorted(committed),
    events: sorted(events),
    sessions: sorted(sessions),
    notices: sorted(notices).map(([id, n]) => [id, n.type, n.payload])
  }
}

const steps = fc.array(step, { minLength: 1, maxLength: 40 })
const cuts = fc.array(fc.nat({ max: 40 }), { maxLength: 6 })

describe("the batch fold", () => {
  it("comes to the same answers, rows, states and counts however the log is cut into batches", () => {
    fc.assert(fc.property(steps, cuts, (s, c) => {
      const log = logOf(s)
      expect(foldInBatches(log, c)).toEqual(foldInBatches(log, []))
    }))
  })

  it("answers a retry of a keyed signal as its first copy was answered, and counts it once", () => {
    fc.assert(fc.property(steps, cuts, (s, c) => {
      const log = logOf(s)
      const run = foldInBatches(log, c)
      const firstAnswer = new Map<string, Verdict>()
      const firstOffset = new Map<string, number>()
      log.forEach(({ record, offset }, i) => {
        if (record.kind !== "signal") return
        const answer = run.outcomes[i] as Verdict
        expect(answer.signal_id).toBe(record.signal_id)
        const first = firstAnswer.get(record.signal_id)
        if (first === undefined) {
          expect(answer.duplicate).toBeUndefined()
          firstAnswer.set(record.signal_id, answer)
          firstOffset.set(record.signal_id, offset)
        } else {
          expect(answer).toEqual({ ...first, duplicate: true })
        }
      })
      // Without the retries in the log, everything counted is the same.
      const originals = log.filter(({ record, offset }) => record.kind !== "signal" || firstOffset.get(record.signal_id) === offset)
      const once = foldInBatches(originals, c)
      expect(run.counts).toEqual(once.counts)
      expect(run.events).toEqual(once.events)
      expect(run.states).toEqual(once.states)
    }))
  })

  it("counts every signal that is usage in its org, team and day, whatever the rules answered", () => {
    fc.assert(fc.property(steps, (s) => {
      const log = logOf(s)
      const run = foldInBatches(log, [])
      const expected = new Map<string, number>()
      const seen = new Set<string>()
      for (const { record } of log) {
        if (record.kind !== "signal" || seen.has(record.signal_id)) continue
        seen.add(record.signal_id)
        if (record.type === "pre-tool") continue
        const day = `d:${record.ts.slice(0, 10)}`
        const tokens = record.metadata.tokens_in as number
        for (const k of [scopeKey("org_1", "live", "org", "org_1", day), ...(record.team_ids ?? []).map((t) => scopeKey("org_1", "live", "team", t, day))]) {
          expected.set(k, (expected.get(k) ?? 0) + tokens)
        }
      }
      const counted = new Map(run.counts.filter(([k]) => k.includes("\u0001d:")).map(([k, u]) => [k, u.tokens_in]))
      for (const [k, tokens] of expected) expect(counted.get(k)).toBe(tokens)
    }))
  })

  it("blocks a user once the team budget or the per-user limit is reached, and no one before", () => {
    fc.assert(fc.property(steps, (s) => {
      const log = logOf(s)
      const run = foldInBatches(log, [])
      const seen = new Set<string>()
      const team = new Map<string, number>()
      const user = new Map<string, number>()
      log.forEach(({ record }, i) => {
        if (record.kind !== "signal" || seen.has(record.signal_id)) return
        seen.add(record.signal_id)
        const day = record.ts.slice(0, 10)
        const inTeam = (record.team_ids ?? []).includes("team_1")
        const teamBefore = inTeam ? team.get(day) ?? 0 : 0
        const userBefore = user.get(`${record.user_id}:${day}`) ?? 0
        const tokensIn = record.type === "pre-tool" ? 0 : record.metadata.tokens_in as number
        const tokensOut = record.type === "pre-tool" ? 0 : record.metadata.tokens_out as number
        const answer = run.outcomes[i] as Verdict
        // The signal that reaches a limit is let through; every further one in its window is blocked.
        const blocked = (inTeam && teamBefore >= 1_200) || userBefore >= 500
        expect({ signal: i, ok: answer.ok }).toEqual({ signal: i, ok: !blocked })
        if (inTeam) team.set(day, teamBefore + tokensIn)
        user.set(`${record.user_id}:${day}`, userBefore + tokensIn + tokensOut)
      })
    }))
  })

  it("replayed from a time, rewrites the rows of records from then on and folds the rest into the state", () => {
    fc.assert(fc.property(steps, cuts, fc.nat({ max: 39 }), (s, c, from) => {
      const log = logOf(s)
      const at = Date.parse(log[from % log.length]!.record.ts)
      const full = foldInBatches(log, c)
      // The rows from before `at` stay in the database; the replay writes the others again.
      const kept = full.events.filter(([, e]) => Date.parse(e.ts) < at)
      const replayed = foldInBatches(log, c, { from: at, kept })
      expect(replayed.states).toEqual(full.states)
      expect(replayed.counts).toEqual(full.counts)
      expect(replayed.events).toEqual(full.events)
      // Each session row it writes is the full run's; every session active from then on is written.
      const fullSessions = new Map(full.sessions)
      for (const [id, row] of replayed.sessions) expect(row).toEqual(fullSessions.get(id))
      const written = new Set(replayed.sessions.map(([id]) => id))
      for (const [id, row] of full.sessions) if (Date.parse(row.last_activity_at) >= at) expect(written).toContain(id)
    }))
  })
})

describe("one batch of a user crossing the org's daily budget", () => {
  // Eight calls of 800 input tokens against a 2,000-token budget that warns: the third crosses it.
  const log: ReadonlyArray<Entry> = Array.from(
    { length: 8 },
    (_, i) => signalAt({ at: t0 + i * 1_000, type: "post-tool", team_ids: ["team_1"], metadata: { model: "claude-sonnet-4", tokens_in: 800, tokens_out: 0 } })
  ).map((record, offset) => ({ partition: 0, offset, key: record.user_id, record }))
  const context: BatchContext = {
    partition: 0,
    settings: defaultFoldSettings,
    rules: { rulesFor: () => [rules[0]!], watched: () => true },
    notify: true,
    committed: () => undefined,
    reportedBefore: () => false,
    scopeKeys: makeScopeKeys().keysOf
  }
  const fold = (over: Partial<BatchContext> = {}) => foldBatch(log, new Map([["user_a", emptyUserState]]), new Map(), { ...context, ...over })
  const actions = (outcomes: ReadonlyArray<Outcome>) => outcomes.map((o) => ("action" in o && o.action !== undefined ? o.action : "ok"))

  it("warns on every signal past it, and reports the warning and the crossing once", () => {
    const out = fold()
    expect(actions(out.outcomes)).toEqual(["ok", "ok", "ok", "warn", "warn", "warn", "warn", "warn"])
    expect(out.notices.map((n) => n.type)).toEqual([
      "session.started",
      "budget.warning",
      "budget.exceeded",
      ...Array.from({ length: 5 }, () => "rule.triggered")
    ])
    expect(out.reported.size).toBe(2)
  })

  it("does not report again what an earlier batch reported", () => {
    const out = fold({ reportedBefore: () => true })
    expect(actions(out.outcomes)).toEqual(["ok", "ok", "ok", "warn", "warn", "warn", "warn", "warn"])
    expect(out.notices.map((n) => n.type)).toEqual(["session.started", ...Array.from({ length: 5 }, () => "rule.triggered")])
    expect(out.reported.size).toBe(0)
  })

  it("folded without notifying (a replay), answers every signal ok and says nothing, but counts it all", () => {
    const out = fold({ notify: false })
    expect(actions(out.outcomes)).toEqual(Array.from({ length: 8 }, () => "ok"))
    expect(out.notices).toEqual([])
    expect(out.counts.get(scopeKey("org_1", "live", "org", "org_1", "d:2026-03-02"))?.tokens_in).toBe(6_400)
  })
})

describe("a user's keyed and unkeyed signals over a budget, in one batch", () => {
  // A tool check, then a call that crosses the 2,000-token org budget, then a keyed call and an
  // unkeyed one past it: both warned.
  const log: ReadonlyArray<Entry> = [
    signalAt({ at: t0, type: "pre-tool", metadata: { tool_name: "Bash", project_id: "proj_9" } }),
    signalAt({ at: t0 + 1_000, type: "post-tool", idempotency_key: "call-1", metadata: { model: "claude-sonnet-4", tokens_in: 2_500, tokens_out: 0 } }),
    signalAt({ at: t0 + 2_000, type: "post-tool", idempotency_key: "call-2", metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 0 } }),
    signalAt({ at: t0 + 3_000, type: "post-tool", metadata: { model: "claude-sonnet-4", tokens_in: 100, tokens_out: 0 } })
  ].map((record, offset) => ({ partition: 0, offset, key: record.user_id, record }))
  const context: BatchContext = {
    partition: 0,
    settings: defaultFoldSettings,
    rules: { rulesFor: () => [rules[0]!], watched: () => true },
    notify: true,
    committed: () => undefined,
    reportedBefore: () => false,
    scopeKeys: makeScopeKeys().keysOf
  }
  const fold = (over: Partial<BatchContext> = {}) => foldBatch(log, new Map([["user_a", emptyUserState]]), new Map(), { ...context, ...over })

  it("keeps the verdict on a keyed signal's event, for its retries, and on no other", () => {
    const out = fold()
    const warned = { ok: true, action: "warn", rule_id: "rule_org", message: "rule_org fired" }
    expect(out.events.map((e) => e.verdict ?? null)).toEqual([null, null, warned, null])
    expect(out.outcomes.map((o) => ("action" in o ? o.action : undefined))).toEqual([undefined, undefined, "warn", "warn"])
  })

  it("counts every signal in the project its session was given, the tool check included", () => {
    const out = fold()
    expect(out.events.map((e) => e.project_id)).toEqual(["proj_9", "proj_9", "proj_9", "proj_9"])
    expect(out.counts.get(scopeKey("org_1", "live", "project", "proj_9", "d:2026-03-02"))?.tokens_in).toBe(2_700)
  })

  it("answers each signal and not the timer's tick that closes their session", () => {
    const sessionId = fold().sessions[0]!.id
    const tick: Entry = {
      partition: 0,
      offset: log.length,
      key: "user_a",
      record: {
        v: 1,
        kind: "session-timeout",
        org_id: "org_1",
        environment: "live",
        user_id: "user_a",
        ts: new Date(t0 + 3 * 3_600_000).toISOString(),
        session_id: sessionId,
        last_activity_at: new Date(t0 + 3_000).toISOString()
      }
    }
    const out = foldBatch([...log, tick], new Map([["user_a", emptyUserState]]), new Map(), context)
    expect(out.outcomes.map(outcomeId)).toEqual(log.map((e) => (e.record as SignalRecord).signal_id))
    expect(out.sessions.map((row) => [row.id, row.ended_at !== null])).toEqual([[sessionId, true]])
  })

  it("replayed from a time, writes and answers only the records from then on, and counts them all", () => {
    const out = fold({ projectFrom: t0 + 1_500 })
    expect(out.events.map((e) => e.signal_id)).toEqual(log.slice(2).map((e) => (e.record as SignalRecord).signal_id))
    expect(out.outcomes).toHaveLength(2)
    expect(out.sessions).toHaveLength(1)
    expect(out.counts.get(scopeKey("org_1", "live", "org", "org_1", "d:2026-03-02"))?.tokens_in).toBe(2_700)
  })
})

describe("the scope-usage rows of a batch", () => {
  it("are every count it made, and the ones a budget watches are announced", () => {
    const usage = (n: number): Usage => ({ cost_usd: n / 100, tokens_in: n, tokens_out: n / 2 })
    const counts = new Map<string, Usage>([
      [scopeKey("org_1", "live", "org", "org_1", "d:2026-03-02"), usage(10)],
      [scopeKey("org_1", "live", "team", "team_1", "d:2026-03-02"), usage(20)],
      [scopeKey("org_1", "live", "project", "proj_1", "m:2026-03"), usage(30)]
    ])
    const { rows, watch, announced } = scopeUsageRows(counts, 3, (_o, _e, scope) => scope === "team")
    expect(rows).toEqual([
      { org_id: "org_1", environment: "live", scope: "org", scope_id: "org_1", window_key: "d:2026-03-02", partition: 3, ...usage(10) },
      { org_id: "org_1", environment: "live", scope: "team", scope_id: "team_1", window_key: "d:2026-03-02", partition: 3, ...usage(20) },
      { org_id: "org_1", environment: "live", scope: "project", scope_id: "proj_1", window_key: "m:2026-03", partition: 3, ...usage(30) }
    ])
    expect(watch).toEqual([{ org_id: "org_1", environment: "live", scope: "team", scope_id: "team_1", window_key: "d:2026-03-02" }])
    expect(announced).toEqual([rows[1]])
    const unwatched = scopeUsageRows(counts, 3, undefined)
    expect([unwatched.rows.length, unwatched.watch, unwatched.announced]).toEqual([3, [], []])
  })
})
