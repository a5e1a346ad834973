import { describe, expect, it } from "@effect/vitest"
import { driftStateOf, sessionStreakOf } from "../../src/domain/drift-fold.ts"
import { maxOpenSessions } from "../../src/domain/user-fold.ts"
import { foldHarness, rule } from "../support/fold-harness.ts"

/**
 * Sessions, events, goals and what the fold derives (goal drift, token spikes) as a user and an
 * admin see them, through the engine core in process (test/support/fold-harness.ts).
 */

const prices = { "house-model": { input: 1_000, output: 4_000 } }

describe("sessions", () => {
  it("end by inactivity: the timer's tick closes the session at its last activity, and the next signal opens another", () => {
    const h = foldHarness({ prices })
    const first = h.signal("alice", { type: "session-start" })
    h.advance("10 minutes")
    h.signal("alice", { model: "house-model", tokens_in: 1_000, tokens_out: 250, latency_ms: 900, project_id: "proj_x" })
    h.advance("29 minutes")
    expect(h.sessions("alice")[0]!.ended_at).toBeNull()
    h.advance("1 minute")
    const [ended] = h.sessions("alice")
    expect(ended).toEqual({
      id: first.session_id,
      org_id: "org_1",
      environment: "live",
      user_id: "alice",
      adapter: "claude-code",
      client_session_id: "cs-1",
      project_id: "proj_x",
      started_at: "2026-03-02T09:00:00.000Z",
      last_activity_at: "2026-03-02T09:10:00.000Z",
      ended_at: "2026-03-02T09:10:00.000Z",
      end_reason: "timeout",
      primary_model: "house-model",
      models: ["house-model"],
      tokens_in: 1_000,
      tokens_out: 250,
      cost_usd: 2,
      signal_count: 2,
      error_count: 0
    })
    // The tick is in the log, stamped when the timer fired.
    expect(h.log().flat().filter((e) => e.record.kind === "session-timeout").map((e) => e.record.ts)).toEqual(["2026-03-02T09:40:00.000Z"])
    expect(h.notices("session.ended").map((n) => [n.payload.ts, n.payload.data])).toEqual([["2026-03-02T09:10:00.000Z", {
      session_id: first.session_id,
      user_id: "alice",
      adapter: "claude-code",
      client_session_id: "cs-1",
      project_id: "proj_x",
      started_at: "2026-03-02T09:00:00.000Z",
      ended_at: "2026-03-02T09:10:00.000Z",
      end_reason: "timeout",
      duration_s: 600,
      signal_count: 2,
      error_count: 0,
      model: "house-model",
      models: ["house-model"],
      tokens_in: 1_000,
      tokens_out: 250,
      cost_usd: 2
    }]])
    const next = h.signal("alice", {})
    expect(next.session_id).not.toBe(first.session_id)
    expect(h.sessions("alice").map((s) => [s.started_at, s.ended_at, s.signal_count, s.project_id])).toEqual([
      ["2026-03-02T09:00:00.000Z", "2026-03-02T09:10:00.000Z", 2, "proj_x"],
      ["2026-03-02T09:40:00.000Z", null, 1, null]
    ])
    expect(h.notices("session.started")[1]).toMatchObject({
      org_id: "org_1",
      environment: "live",
      type: "session.started",
      payload: { org_id: "org_1", ts: "2026-03-02T09:40:00.000Z" }
    })
    expect(h.notices("session.started").map((n) => n.payload.data)).toEqual([
      {
        session_id: first.session_id,
        user_id: "alice",
        adapter: "claude-code",
        client_session_id: "cs-1",
        project_id: null,
        started_at: "2026-03-02T09:00:00.000Z"
      },
      {
        session_id: next.session_id,
        user_id: "alice",
        adapter: "claude-code",
        client_session_id: "cs-1",
        project_id: null,
        started_at: "2026-03-02T09:40:00.000Z"
      }
    ])
  })

  it("follow the org's timeout as stamped on each signal", () => {
    const h = foldHarness({ org: { session_timeout: 300 } })
    h.signal("alice", {})
    h.advance("4 minutes")
    h.signal("alice", {})
    h.advance("5 minutes")
    expect(h.sessions("alice").map((s) => [s.signal_count, s.end_reason])).toEqual([[2, "timeout"]])
    // Longer from the next signal on, for the session it lands in.
    h.setOrg({ session_timeout: 3_600 })
    h.signal("alice", {})
    h.advance("59 minutes")
    h.signal("alice", {})
    expect(h.sessions("alice").map((s) => [s.signal_count, s.ended_at === null])).toEqual([[2, false], [2, true]])
  })

  it("a signal after the timeout ends the old session even before its tick, as timed out at its last activity", () => {
    const h = foldHarness()
    h.advance("500 millis")
    const first = h.signal("alice", {})
    // Due at 09:30:00.500; the sweep that would tick it runs at 09:30:01.
    h.advanceTo("2026-03-02T09:30:00.700Z")
    const next = h.signal("alice", {})
    expect(next.session_id).not.toBe(first.session_id)
    expect(h.sessions("alice").map((s) => [s.id, s.ended_at, s.end_reason])).toEqual([
      [first.session_id, "2026-03-02T09:00:00.500Z", "timeout"],
      [next.session_id, null, null]
    ])
    expect(h.notices().map((n) => n.type)).toEqual(["session.started", "session.ended", "session.started"])
    // The old session's timer went with it: no tick for it follows.
    h.advance("1 minute")
    expect(h.log().flat().filter((e) => e.record.kind === "session-timeout")).toEqual([])
    // Exactly at the timeout (before the sweep) is still the same session.
    h.advanceTo("2026-03-02T10:00:00.700Z")
    expect(h.signal("alice", {}).session_id).toBe(next.session_id)
  })

  it("of two runs, each ends at its own timeout, whichever is due first", () => {
    const h = foldHarness()
    const a = h.signal("alice", { session_id: "run-a" })
    h.advance("1 minute")
    const b = h.signal("alice", { session_id: "run-b" })
    h.advance("4 minutes")
    h.signal("alice", { session_id: "run-a" })
    h.advance("31 minutes")
    expect(h.sessions("alice").map((s) => [s.id, s.ended_at])).toEqual([
      [a.session_id, "2026-03-02T09:05:00.000Z"],
      [b.session_id, "2026-03-02T09:01:00.000Z"]
    ])
    expect(h.log().flat().filter((e) => e.record.kind === "session-timeout").map((e) => e.record.ts))
      .toEqual(["2026-03-02T09:31:00.000Z", "2026-03-02T09:35:00.000Z"])
  })

  it("end at session-end with that signal's time; the next signal of the run opens another", () => {
    const h = foldHarness()
    const first = h.signal("alice", { tokens_in: 5 })
    h.advance("2 minutes")
    h.signal("alice", { type: "session-end" })
    h.advance("1 minute")
    const next = h.signal("alice", { tokens_in: 1 })
    expect(next.session_id).not.toBe(first.session_id)
    expect(h.sessions("alice").map((s) => [s.id, s.ended_at, s.end_reason, s.signal_count])).toEqual([
      [first.session_id, "2026-03-02T09:02:00.000Z", "session-end", 2],
      [next.session_id, null, null, 1]
    ])
    expect(h.notices("session.ended").map((n) => [n.payload.data.end_reason, n.payload.data.duration_s])).toEqual([["session-end", 120]])
    // No timer is left for the ended session.
    h.advance("1 day")
    expect(h.notices("session.ended")).toHaveLength(2)
  })

  it("are one per run: tool, environment and the tool's session id; the user's counters add them all up", () => {
    const h = foldHarness()
    const a = h.signal("alice", { adapter: "cursor", tokens_in: 1 })
    const b = h.signal("alice", { adapter: "claude-code", tokens_in: 2 })
    const c = h.signal("alice", { adapter: "cursor", session_id: "cs-2", tokens_in: 4 })
    const d = h.signal("alice", { adapter: "cursor", tokens_in: 8 })
    expect(new Set([a.session_id, b.session_id, c.session_id]).size).toBe(3)
    expect(d.session_id).toBe(a.session_id)
    expect(h.sessions("alice").map((s) => [s.adapter, s.client_session_id, s.tokens_in])).toEqual([
      ["cursor", "cs-1", 9],
      ["claude-code", "cs-1", 2],
      ["cursor", "cs-2", 4]
    ])
    expect(h.userSpend("alice").tokens_in).toBe(15)
  })

  it("count models, errors and latency: the primary model is the one most signals used", () => {
    const h = foldHarness()
    h.signal("alice", { model: "claude-haiku-4", error_code: "rate_limited", latency_ms: 120 })
    h.signal("alice", { model: "claude-sonnet-4", latency_ms: -5 })
    h.signal("alice", { latency_ms: 0 })
    h.signal("alice", { model: "claude-sonnet-4", error_code: "" })
    h.signal("alice", { model: "", tokens_in: -3, tokens_out: 2.9 })
    expect(h.sessions("alice")[0]).toMatchObject({
      primary_model: "claude-sonnet-4",
      models: ["claude-haiku-4", "claude-sonnet-4"],
      error_count: 1,
      signal_count: 5,
      tokens_in: 0,
      tokens_out: 2
    })
    expect(h.events("alice").map((e) => [e.model, e.error_code, e.latency_ms])).toEqual([
      ["claude-haiku-4", "rate_limited", 120],
      ["claude-sonnet-4", null, null],
      [null, null, 0],
      ["claude-sonnet-4", null, null],
      [null, null, null]
    ])
    // A tie goes to the model seen first.
    h.signal("alice", { model: "claude-haiku-4" })
    expect(h.sessions("alice")[0]!.primary_model).toBe("claude-haiku-4")
  })

  it("keep each event where the log has it, with the signal's own metadata", () => {
    const h = foldHarness({ prices })
    const answer = h.signal("alice", { model: "house-model", tokens_in: 2_000, tokens_out: 500, note: "kept as sent" })
    const [event] = h.events("alice")
    const placed = h.log().flat().find((e) => e.record.kind === "signal" && e.record.signal_id === answer.signal_id)!
    expect(event).toEqual({
      id: `evt_${answer.signal_id.slice(4)}`,
      signal_id: answer.signal_id,
      org_id: "org_1",
      environment: "live",
      session_id: answer.session_id,
      user_id: "alice",
      project_id: null,
      ts: "2026-03-02T09:00:00.000Z",
      type: "post-tool",
      adapter: "claude-code",
      model: "house-model",
      tokens_in: 2_000,
      tokens_out: 500,
      latency_ms: null,
      cost_usd: 4,
      cost_estimated: true,
      model_known: true,
      error_code: null,
      metadata: { model: "house-model", tokens_in: 2_000, tokens_out: 500, note: "kept as sent" },
      log_partition: placed.partition,
      log_offset: placed.offset
    })
  })

  it(`at most ${maxOpenSessions} stay open per user: one more ends the least recently active`, () => {
    const h = foldHarness()
    for (let i = 0; i < maxOpenSessions; i++) {
      h.signal("alice", { adapter: `tool-${i}` })
      h.advance("1 second")
    }
    h.signal("alice", { adapter: "tool-0" })
    h.signal("alice", { adapter: "one-more" })
    expect(Object.keys(h.state("alice").open)).toHaveLength(maxOpenSessions)
    expect(h.sessions("alice").filter((s) => s.ended_at !== null).map((s) => [s.adapter, s.end_reason, s.ended_at]))
      .toEqual([["tool-1", "timeout", "2026-03-02T09:00:01.000Z"]])
    expect(h.notices("session.ended").map((n) => [n.payload.data.adapter, n.payload.data.end_reason])).toEqual([["tool-1", "timeout"]])
  })
})

describe("replay", () => {
  it("of the whole log comes to the live run's sessions, events, goals, counts and states", () => {
    const budget = rule({
      type: "budget",
      scope: "team",
      scope_id: "team_a",
      action: "block",
      condition: { window: "daily", metric: "tokens_in", threshold: 500 }
    })
    const h = foldHarness({ rules: [budget], teams: { alice: ["team_a"], bob: ["team_a"] }, prices })
    h.goal("alice", { op: "create", description: "Fix the login page" })
    for (let i = 0; i < 12; i++) {
      h.signal(i % 3 === 0 ? "bob" : "alice", {
        model: "house-model",
        tokens_in: 100,
        project_id: i % 4 === 0 ? "proj_x" : undefined,
        idempotency_key: `k${i % 5}`
      })
      h.advance(i % 5 === 0 ? "40 minutes" : "1 minute")
    }
    h.signal("erin", { type: "session-end" })
    const live = h.projections()
    const again = h.replay()
    expect(again.sessions).toEqual(live.sessions)
    // Replay judges nothing: the events are the same but for the verdicts the live run kept.
    expect(again.events).toEqual(live.events.map(({ verdict: _verdict, ...e }) => e))
    expect(again.goals).toEqual(live.goals)
    expect(again.scopeUsage).toEqual(live.scopeUsage)
    expect(again.states).toEqual(live.states)
  })
})

describe("goals", () => {
  it("are created active, change status as allowed, and refuse what is not", () => {
    const h = foldHarness()
    const created = h.goal("alice", { op: "create", description: "Ship the billing page", adapter: "cursor" })
    expect(created).toMatchObject({ _tag: "Goal", goal: { description: "Ship the billing page", status: "active", adapter: "cursor", created_at: h.now() } })
    if (created._tag !== "Goal") return
    const id = created.goal.id
    h.advance("1 hour")
    expect(h.goal("alice", { op: "update", goal_id: id, status: "completed" })).toMatchObject({
      _tag: "Goal",
      goal: { status: "completed", updated_at: h.now() }
    })
    expect(h.goal("alice", { op: "update", goal_id: id, status: "abandoned" }))
      .toMatchObject({ _tag: "Refused", refusal: { status: 409, code: "invalid_transition" } })
    expect(h.goal("alice", { op: "update", goal_id: id, status: "active", description: "Ship it, really" }))
      .toMatchObject({ _tag: "Goal", goal: { status: "active", description: "Ship it, really" } })
    expect(h.goal("bob", { op: "update", goal_id: id, status: "completed" })).toMatchObject({ _tag: "Refused", refusal: { status: 404 } })
    expect(h.goal("alice", { op: "update", goal_id: id, description: "" })).toMatchObject({ _tag: "Refused", refusal: { status: 400 } })
    expect(h.goals().map((g) => [g.id, g.user_id, g.status, g.description])).toEqual([[id, "alice", "active", "Ship it, really"]])
  })
})

describe("goal limits", () => {
  it("a user has at most 100 active goals: one more, or one more reopened, is refused until one closes", () => {
    const h = foldHarness()
    const ids = Array.from({ length: 100 }, (_, i) => {
      const made = h.goal("alice", { op: "create", description: `goal ${i}` })
      return made._tag === "Goal" ? made.goal.id : ""
    })
    const tooMany = {
      _tag: "Refused",
      refusal: { status: 409, code: "too_many_goals", message: "a user has at most 100 active goals; complete or abandon one first" }
    }
    expect(h.goal("alice", { op: "create", description: "one more" })).toMatchObject(tooMany)
    expect(h.goal("alice", { op: "update", goal_id: ids[0]!, status: "completed" })).toMatchObject({ _tag: "Goal" })
    expect(h.goal("alice", { op: "create", description: "one more" })).toMatchObject({ _tag: "Goal", goal: { status: "active" } })
    expect(h.goal("alice", { op: "update", goal_id: ids[0]!, status: "active" })).toMatchObject(tooMany)
    // Changing an active goal's text is no new active goal.
    expect(h.goal("alice", { op: "update", goal_id: ids[1]!, description: "goal one, reworded" })).toMatchObject({
      _tag: "Goal",
      goal: { description: "goal one, reworded" }
    })
    // Another user's goals are their own.
    expect(h.goal("bob", { op: "create", description: "bob's" })._tag).toBe("Goal")
    expect(h.goals().filter((g) => g.user_id === "alice" && g.status === "active")).toHaveLength(100)
  })

  it("the 100 most recently closed goals can be reopened; older ones are forgotten, open ones never", () => {
    const h = foldHarness()
    const create = (description: string) => {
      const made = h.goal("alice", { op: "create", description })
      if (made._tag !== "Goal") throw new Error("not created")
      return made.goal.id
    }
    const open = create("stays open")
    const close = (id: string, status: "completed" | "abandoned") => {
      h.advance("1 second")
      h.goal("alice", { op: "update", goal_id: id, status })
    }
    // Made in pairs and each pair closed in reverse: the least recently closed is not the first made.
    const closed: Array<string> = []
    for (let i = 0; i < 50; i++) {
      const first = create(`first ${i}`)
      const second = create(`second ${i}`)
      close(second, "completed")
      close(first, "abandoned")
      closed.push(second, first)
    }
    const last = create("last")
    close(last, "completed")
    closed.push(last)
    expect(h.goal("alice", { op: "update", goal_id: closed[0]!, status: "active" })).toMatchObject({ _tag: "Refused", refusal: { status: 404 } })
    expect(h.goal("alice", { op: "update", goal_id: closed[1]!, status: "active" })).toMatchObject({ _tag: "Goal" })
    expect(h.goal("alice", { op: "update", goal_id: open, description: "still here" })).toMatchObject({ _tag: "Goal" })
    expect(Object.keys(h.state("alice").goals ?? {})).toHaveLength(101)
    // The forgotten goal stays in the projection as it was.
    expect(h.goals().find((g) => g.id === closed[0])).toMatchObject({ status: "completed" })
  })

  it("refusals say what was wrong, and change nothing", () => {
    const h = foldHarness()
    const made = h.goal("alice", { op: "create", description: "Ship it" })
    if (made._tag !== "Goal") throw new Error("not created")
    const id = made.goal.id
    expect(h.goal("alice", { op: "update", goal_id: "goal_nope", status: "completed" })).toMatchObject({
      _tag: "Refused",
      refusal: { status: 404, code: "not_found", message: "goal goal_nope not found" }
    })
    expect(h.goal("alice", { op: "update", goal_id: id, status: "active" })).toMatchObject({
      _tag: "Refused",
      refusal: {
        status: 409,
        code: "invalid_transition",
        message: "status: a goal cannot go from active to active (allowed: active → completed or abandoned; completed or abandoned → active)"
      }
    })
    expect(h.goal("alice", { op: "update", goal_id: id, description: " " })).toMatchObject({
      _tag: "Refused",
      refusal: { status: 400, code: "invalid_parameters" }
    })
    expect(h.goals()).toEqual([expect.objectContaining({ id, status: "active", description: "Ship it" })])
    expect(h.state("alice").goals?.[id]).toMatchObject({ status: "active", description: "Ship it" })
    expect(h.state("alice").goals?.[id]?.updated_at).toBeUndefined()
    // Goal commands write goals only.
    expect([h.sessions(), h.events(), h.notices()]).toEqual([[], [], []])
  })

  it("a closed goal's text can change without reopening it; a status change keeps the text", () => {
    const h = foldHarness()
    const made = h.goal("alice", { op: "create", description: "Ship it" })
    if (made._tag !== "Goal") throw new Error("not created")
    expect(h.goal("alice", { op: "update", goal_id: made.goal.id, status: "abandoned" })).toMatchObject({
      goal: { status: "abandoned", description: "Ship it" }
    })
    expect(h.goal("alice", { op: "update", goal_id: made.goal.id, description: "Ship it later" }))
      .toMatchObject({ _tag: "Goal", goal: { status: "abandoned", description: "Ship it later" } })
    expect([h.sessions(), h.events(), h.notices()]).toEqual([[], [], []])
  })
})

describe("goal drift", () => {
  const offGoal = ["write a poem about autumn", "what is the capital of peru", "recommend some jazz records"]

  it("three prompts off the user's goal append one goal-drift signal to the session, where the plan has the feature", () => {
    const h = foldHarness({ org: { plan: "professional" } })
    h.goal("alice", { op: "create", description: "Fix authentication login bugs" })
    const answers = offGoal.map((prompt) => h.signal("alice", { type: "user-prompt", prompt }))
    const drift = h.events("alice").filter((e) => e.type === "goal-drift")
    expect(drift).toHaveLength(1)
    expect(drift[0]).toMatchObject({
      session_id: answers[2]!.session_id,
      cost_usd: 0,
      cost_estimated: false,
      model_known: false,
      metadata: { score: 0, off_goal_prompts: 3, source: "engine", prompt_signal_id: answers[2]!.signal_id }
    })
    expect(drift[0]!.signal_id).toMatch(/^sig_[0-9a-f]{32}$/)
    expect(h.sessions("alice")[0]).toMatchObject({ signal_count: 4, cost_usd: 0 })
    // An on-goal prompt starts the count again.
    h.signal("alice", { type: "user-prompt", prompt: "the login bug in authentication" })
    offGoal.slice(0, 2).forEach((prompt) => h.signal("alice", { type: "user-prompt", prompt }))
    expect(h.events("alice").filter((e) => e.type === "goal-drift")).toHaveLength(1)
  })

  it("counts prompts and context switches only, against active goals only; a refocus-ack starts the count again", () => {
    const h = foldHarness()
    const closed = h.goal("alice", { op: "create", description: "zebra yacht xylophone walrus violin" })
    if (closed._tag === "Goal") h.goal("alice", { op: "update", goal_id: closed.goal.id, status: "completed" })
    // No active goal: nothing is judged; the prompt's words are kept as context, for a goal set for that work.
    h.signal("alice", { type: "user-prompt", prompt: offGoal[0] })
    expect(h.state("alice").drift).toEqual({ live: { streak: 0, context: "poem autumn" } })
    h.goal("alice", { op: "create", description: "Fix authentication login bugs" })
    // A goal set for other work starts it over.
    expect(driftStateOf(h.state("alice"), "live").context).toBeUndefined()
    const first = h.signal("alice", { type: "user-prompt", prompt: "zebra yacht xylophone walrus violin" })
    h.signal("alice", { type: "post-tool", prompt: "fix the authentication login bugs", description: "authentication" })
    h.signal("alice", { type: "context-switch", description: "walrus violin concerts" })
    const streak = () => sessionStreakOf(h.state("alice"), "live", first.session_id!)
    expect(streak().streak).toBe(2)
    expect(streak().off?.map((o) => o.prompt)).toEqual(["zebra yacht xylophone walrus violin", "walrus violin concerts"])
    h.signal("alice", { type: "refocus-ack" })
    expect(streak().streak).toBe(0)
    offGoal.forEach((prompt) => h.signal("alice", { type: "context-switch", prompt }))
    expect(h.events("alice").filter((e) => e.type === "goal-drift")).toHaveLength(1)
  })

  it("takes a prompt whose overlap with a goal reaches the threshold as on-goal", () => {
    const h = foldHarness()
    const goal = h.goal("alice", { op: "create", description: "zebra yacht xylophone walrus violin" })
    // One of the goal's five terms: an overlap of exactly 0.2.
    const answers = [0, 1, 2].map((i) => h.signal("alice", { type: "user-prompt", prompt: `zebra kite lemon mango nectar olive ${i}` }))
    expect(h.events("alice").filter((e) => e.type === "goal-drift")).toEqual([])
    expect(h.state("alice").drift).toMatchObject({ live: { goal_id: goal._tag === "Goal" ? goal.goal.id : "" } })
    expect(sessionStreakOf(h.state("alice"), "live", answers[0]!.session_id!)).toEqual({ streak: 0 })
  })

  it("is not acted on below the plan that has it", () => {
    const h = foldHarness({ org: { plan: "developer" } })
    h.goal("alice", { op: "create", description: "Fix authentication login bugs" })
    offGoal.forEach((prompt) => h.signal("alice", { type: "user-prompt", prompt }))
    expect(h.events("alice").map((e) => e.type)).toEqual(["user-prompt", "user-prompt", "user-prompt"])
  })
})

describe("token spikes", () => {
  it("are reported to webhooks on plans with anomalies, in the signal's session", () => {
    const run = (plan: "team" | "professional") => {
      const h = foldHarness({ org: { plan } })
      const answers = [100, 120, 80, 100, 100, 0, 900].map((tokens) =>
        h.signal("alice", tokens === 0 ? { type: "session-start" } : { tokens_in: tokens / 2, tokens_out: tokens / 2 })
      )
      // Signals without tokens are no observations.
      h.signal("alice", { type: "stop" })
      h.signal("alice", { tokens_in: 5_000 })
      return { notices: h.notices("anomaly.detected").map((n) => n.payload.data), session: answers[6]!.session_id }
    }
    const team = run("team")
    expect(team.notices).toEqual([
      { anomaly_type: "token_spike", user_id: "alice", baseline_avg: 100, observed: 900, deviation_pct: 800, session_id: team.session },
      expect.objectContaining({ anomaly_type: "token_spike", observed: 5_000 })
    ])
    expect(run("professional").notices).toEqual([])
    // Below the plan only the anomalies are held back: the session's own events still go out.
    const below = foldHarness({ org: { plan: "professional" } })
    below.signal("alice", { tokens_in: 100 })
    expect(below.notices().map((n) => n.type)).toEqual(["session.started"])
  })
})
