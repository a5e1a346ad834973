import { describe, expect, it } from "@effect/vitest"
import { development, fresh, freshTwo, held, inOtherLanguages, isPrompt, underAnyWorkGoals, underThinGoals, wide } from "../drift/corpus.ts"
import { evaluate, type Figures } from "../drift/evaluate.ts"

/**
 * Goal drift measured on the labelled corpus (test/drift/): what users see, prompt by prompt and
 * session by session, alone and beside another agent of the user's on the goal. The targets hold on the development goals; the held-out and the fresh
 * held-out goals must not get worse than they are (the fresh ones are never tuned on).
 * `npm run bench -- --scenarios drift` prints the figures.
 */
const targets = (f: Figures) => ({
  "on-goal prompts called off-goal ≤ 10%": f.on_goal_called_off <= 0.1,
  "off-goal recall ≥ 0.8": f.off_goal_recall >= 0.8,
  "drift in ≤ 3% of on-goal sessions": f.on_goal_sessions_drift_fired <= 0.03,
  "drift in ≥ 80% of drifted sessions, within 3 prompts": f.drift_found_within_3 >= 0.8
})

describe("the goal-drift corpus", () => {
  it("has goals of every kind, each with on- and off-goal prompts and labelled sessions", () => {
    const all = [...development, ...held, ...wide, ...fresh, ...freshTwo]
    expect(development.length).toBeGreaterThanOrEqual(40)
    expect(new Set(all.map((g) => g.kind))).toEqual(new Set(["bug", "feature", "migration", "refactor", "infrastructure", "docs"]))
    expect(new Set(all.map((g) => g.id)).size).toBe(all.length)
    for (const g of all) {
      const prompts = g.work.filter(isPrompt).length + g.off.length + g.drift.filter(isPrompt).length
      expect({ goal: g.id, prompts: prompts >= 12, work: g.work.filter(isPrompt).length >= 6, drift: g.drift.filter(isPrompt).length >= 3 })
        .toEqual({ goal: g.id, prompts: true, work: true, drift: true })
    }
  })

  it("meets the targets on the development goals", () => {
    const { figures } = evaluate(development)
    expect({ figures, met: targets(figures) }).toEqual({ figures, met: Object.fromEntries(Object.keys(targets(figures)).map((k) => [k, true])) })
  })

  it("meets the session targets on the development goals while another agent of the user's works on the goal", () => {
    const { figures } = evaluate(development)
    expect({ found: figures.parallel_drift_found_within_3 >= 0.8, false_drift: figures.parallel_work_drift_fired <= 0.03 })
      .toEqual({ found: true, false_drift: true })
  })

  it("finds other work in a new session after a session of the goal's work no less often than when first measured", () => {
    // 76.2% on the development goals when this session kind was added, under the 80% target: the
    // user's context then holds the whole of the goal's work, whose area words the other work shares.
    expect(evaluate(development).figures.new_session_drift_found_within_3).toBeGreaterThanOrEqual(0.762)
  })

  it("keeps to the on-goal targets on the development goals when the goal's work is taken up in a new session", () => {
    // The user's context (the first half's words) is what recognises the second half in a session of its own.
    const f = evaluate(development).figures
    expect({ called_off: f.continued_called_off <= 0.1, false_drift: f.continued_drift_fired <= 0.03 }).toEqual({ called_off: true, false_drift: true })
  })

  it("keeps to the on-goal targets on the development goals when a goal command comes in the middle of the work", () => {
    // The goal refined, or another goal set, while the work goes on: the context stays (context-6; context-5
    // started it over: 22.8% called off, a drift in 9.5% of the sessions).
    const f = evaluate(development).figures
    expect({
      called_off: f.goal_command_called_off,
      false_drift: f.goal_command_drift_fired,
      held: f.goal_command_called_off <= 0.1 && f.goal_command_drift_fired <= 0.03
    })
      .toEqual({ called_off: f.goal_command_called_off, false_drift: f.goal_command_drift_fired, held: true })
  })

  // Floors for the same, as context-6 first measured it on the other sets.
  it.each([
    { set: "held-out", goals: held, floor: [0.19, 0] },
    { set: "wide", goals: wide, floor: [0.093, 0] },
    { set: "fresh held-out", goals: fresh, floor: [0.198, 0] },
    { set: "second fresh held-out", goals: freshTwo, floor: [0.163, 0.083] }
  ])("keeps the $set goals' work after a goal command no worse than context-6 first did", ({ goals, floor: [calledOff, falseDrift] }) => {
    const f = evaluate(goals).figures
    const got = { called_off: f.goal_command_called_off, false_drift: f.goal_command_drift_fired }
    expect({ got, held: { called_off: got.called_off <= calledOff!, false_drift: got.false_drift <= falseDrift! } })
      .toEqual({ got, held: { called_off: true, false_drift: true } })
  })

  it("keeps to the targets on the development goals when the goal is set after the work began, or after other work", () => {
    // From context-7 the prompts before any goal are context too, and a goal set then keeps that context only when
    // it shows the goal's own words. context-6 judged the work going on by the goal's words and the earlier tool
    // calls (15% called off), and a goal set after other work kept that work's tool calls (31% of the return found).
    const f = evaluate(development).figures
    const got = { called_off: f.goal_later_called_off, false_drift: f.goal_later_drift_fired, back_found: f.goal_after_other_found_within_3 }
    expect({ got, held: got.called_off <= 0.1 && got.false_drift <= 0.03 && got.back_found >= 0.8 }).toEqual({ got, held: true })
    const before = evaluate(development, { method: "context-6" }).figures
    expect({ called_off: before.goal_later_called_off > 0.1, back_found: before.goal_after_other_found_within_3 < 0.8 })
      .toEqual({ called_off: true, back_found: true })
  })

  it("keeps to the targets on the development goals with two goals active, the work moving from one to the other", () => {
    const f = evaluate(development).figures
    const got = { called_off: f.two_goals_called_off, false_drift: f.two_goals_drift_fired, found: f.two_goals_drift_found_within_3 }
    expect({ got, held: got.called_off <= 0.1 && got.false_drift <= 0.03 && got.found >= 0.8 }).toEqual({ got, held: true })
  })

  // Floors for the same, as context-7 first measured them: the goal set after the work began (its later prompts called
  // off, sessions with a drift), the return to the work done before the goal (found within 3 prompts), two goals
  // active (prompts called off, sessions with a drift, drifts found within 3 prompts).
  it.each([
    { set: "held-out", goals: held, floor: [0.19, 0, 0.4, 0.15, 0.1, 0.3] },
    { set: "wide", goals: wide, floor: [0.093, 0, 0.438, 0.076, 0, 0.313] },
    { set: "fresh held-out", goals: fresh, floor: [0.208, 0, 0.25, 0.255, 0.167, 0.417] },
    { set: "second fresh held-out", goals: freshTwo, floor: [0.173, 0.083, 0.25, 0.158, 0.125, 0.25] }
  ])("does no worse on the $set goals when goals are set around the work than context-7 first did", ({ goals, floor }) => {
    const f = evaluate(goals).figures
    const got = [f.goal_later_called_off, f.goal_later_drift_fired, f.goal_after_other_found_within_3, f.two_goals_called_off, f.two_goals_drift_fired,
      f.two_goals_drift_found_within_3]
    const lower = [true, true, false, true, true, false]
    expect({ got, held: got.map((g, i) => (lower[i] ? g <= floor[i]! : g >= floor[i]!)) }).toEqual({ got, held: got.map(() => true) })
  })

  it("does not call the same work off again once the user answered its false drift as the goal's work", () => {
    // Development and wide work sessions have no false drift; the unseen sets' have (4 in all).
    const f = evaluate([...held, ...fresh, ...freshTwo]).figures
    expect(f.work_sessions_with_false_drift).toBeGreaterThanOrEqual(4)
    // Also when the answer comes a prompt late, the session back on the goal by then: it names the drift's prompts.
    expect({
      calledOff: f.answered_called_off < f.after_false_drift_called_off,
      again: f.answered_new_session_drift_fired,
      late: f.answered_late_new_session_drift_fired
    })
      .toEqual({ calledOff: true, again: 0, late: 0 })
    expect(f.after_false_drift_new_session_drift_fired).toBeGreaterThan(0)
  })

  it("gives every drift its own session's prompts as evidence, on every set", () => {
    const foreign = [development, held, wide, fresh, freshTwo].map((goals) => evaluate(goals).figures.parallel_drifts_with_foreign_evidence)
    expect(foreign).toEqual([0, 0, 0, 0, 0])
  })

  // Floors: each set's figures when it was written or first measured (docs/benchmarks.md); a change may only improve them.
  // The held-out goals were written after context-2 was settled; the wide ones are development material for placing
  // thresholds; both fresh sets are only measured on, never tuned on (the second written blind to the detector).
  // Then: found within 3 prompts and false drifts while another agent of the user's works on the goal; the last,
  // found within 3 prompts when the other work is a new session after a session of the goal's work; the goal's work
  // taken up in a new session: its prompts called off and its false drifts.
  it.each([
    { set: "held-out", goals: held, floor: [0.178, 0.706, 0.1, 0.4, 0.4, 0.1, 0.3, 0.19, 0] },
    { set: "wide", goals: wide, floor: [0.082, 0.492, 0.031, 0.438, 0.25, 0, 0.313, 0.093, 0] },
    { set: "fresh held-out", goals: fresh, floor: [0.333, 0.66, 0.208, 0.333, 0.333, 0.167, 0.333, 0.208, 0] },
    { set: "second fresh held-out", goals: freshTwo, floor: [0.225, 0.485, 0.083, 0.25, 0.083, 0.083, 0.333, 0.173, 0.083] }
  ])(
    "does no worse than it did on the $set goals",
    ({ goals, floor: [calledOff, recall, falseDrift, found, parallelFound, parallelFalse, laterFound, continuedOff, continuedFalse] }) => {
      const { figures } = evaluate(goals)
      expect({
        called_off: figures.on_goal_called_off <= calledOff!,
        recall: figures.off_goal_recall >= recall!,
        false_drift: figures.on_goal_sessions_drift_fired <= falseDrift!,
        found: figures.drift_found_within_3 >= found!,
        parallel_found: figures.parallel_drift_found_within_3 >= parallelFound!,
        parallel_false_drift: figures.parallel_work_drift_fired <= parallelFalse!,
        new_session_found: figures.new_session_drift_found_within_3 >= laterFound!,
        continued_called_off: figures.continued_called_off <= continuedOff!,
        continued_false_drift: figures.continued_drift_fired <= continuedFalse!
      }).toEqual({
        called_off: true,
        recall: true,
        false_drift: true,
        found: true,
        parallel_found: true,
        parallel_false_drift: true,
        new_session_found: true,
        continued_called_off: true,
        continued_false_drift: true
      })
    }
  )

  // Under a thin goal of its kind ("Fix bugs", "Refactor"), the goal's work as context-7 measured it (context-5: 71–90%
  // of on-goal prompts called off, a drift in 75–92% of the work sessions; context-6: 9.5–17.8%, 8.3–35%): on-goal
  // prompts called off, and on-goal sessions with a drift.
  it.each([
    { set: "development", goals: development, floor: [0.068, 0.048] },
    { set: "held-out", goals: held, floor: [0.1, 0.15] },
    { set: "wide", goals: wide, floor: [0.082, 0.094] },
    { set: "fresh held-out", goals: fresh, floor: [0.157, 0.125] },
    { set: "second fresh held-out", goals: freshTwo, floor: [0.081, 0.083] }
  ])("judges the $set goals' work under thin goals no worse than context-7 first did", ({ goals, floor: [calledOff, falseDrift] }) => {
    const { figures } = evaluate(underThinGoals(goals))
    const got = { called_off: figures.on_goal_called_off, false_drift: figures.on_goal_sessions_drift_fired }
    expect({ got, held: { called_off: got.called_off <= calledOff!, false_drift: got.false_drift <= falseDrift! } })
      .toEqual({ got, held: { called_off: true, false_drift: true } })
  })

  it("takes the next task of a thin goal's kind in a new session for its work on the development goals", () => {
    // From context-7 each session says what its work is under a thin goal; under context-6 the user's context, full
    // of the first task, called the second off: 52.3% of its prompts, a drift in 54.8% of those sessions.
    const f = evaluate(underThinGoals(development)).figures
    const got = { called_off: f.thin_next_session_called_off, false_drift: f.thin_next_session_drift_fired }
    expect({ got, held: got.called_off <= 0.1 && got.false_drift <= 0.03 }).toEqual({ got, held: true })
    const before = evaluate(underThinGoals(development), { method: "context-6" }).figures
    expect(before.thin_next_session_drift_fired).toBeGreaterThan(0.5)
  })

  // Several tasks under a thin goal, as context-7 first measured them: the next task of its kind in the same session
  // (prompts called off, sessions with a drift), in a new session (the same), and a task of another kind after the
  // first half (found within 3 prompts).
  it.each([
    { set: "development", goals: development, floor: [0.285, 0.286, 0.06, 0, 0.381] },
    { set: "held-out", goals: held, floor: [0.417, 0.375, 0.125, 0.125, 0.6] },
    { set: "wide", goals: wide, floor: [0.253, 0.25, 0.082, 0, 0.438] },
    { set: "fresh held-out", goals: fresh, floor: [0.34, 0.273, 0.16, 0.182, 0.833] },
    { set: "second fresh held-out", goals: freshTwo, floor: [0.436, 0.5, 0.096, 0.1, 0.333] }
  ])("does no worse on several tasks under the $set goals' thin goals than context-7 first did", ({ goals, floor }) => {
    const f = evaluate(underThinGoals(goals)).figures
    const got = [f.thin_next_task_called_off, f.thin_next_task_drift_fired, f.thin_next_session_called_off, f.thin_next_session_drift_fired,
      f.thin_other_kind_found_within_3]
    expect({ got, held: got.map((g, i) => (i < 4 ? g <= floor[i]! : g >= floor[i]!)) }).toEqual({ got, held: got.map(() => true) })
  })

  // Under a goal of any work ("Sprint tasks"), every task is its work: its own work's prompts called off and sessions with
  // a drift, then the next task in the same session and in a new one (the same), as context-7 first measured them
  // (context-6, development: a drift in 14.3%, 59.5% and 64.3% of those sessions).
  it.each([
    { set: "development", goals: development, floor: [0.043, 0.012, 0.173, 0.167, 0.041, 0] },
    { set: "held-out", goals: held, floor: [0.1, 0.15, 0.256, 0.3, 0.1, 0.1] },
    { set: "wide", goals: wide, floor: [0.044, 0.031, 0.076, 0, 0.044, 0] },
    { set: "fresh held-out", goals: fresh, floor: [0.078, 0, 0.304, 0.333, 0.078, 0] },
    { set: "second fresh held-out", goals: freshTwo, floor: [0.063, 0.083, 0.144, 0.167, 0.063, 0.083] }
  ])("takes every task for the work of a goal of any work on the $set goals, no worse than context-7 first did", ({ goals, floor }) => {
    const f = evaluate(underAnyWorkGoals(goals)).figures
    const got = [
      f.on_goal_called_off,
      f.on_goal_sessions_drift_fired,
      f.thin_next_task_called_off,
      f.thin_next_task_drift_fired,
      f.thin_next_session_called_off,
      f.thin_next_session_drift_fired
    ]
    expect({ got, held: got.map((g, i) => g <= floor[i]!) }).toEqual({ got, held: got.map(() => true) })
  })

  it("takes the work prompted in another language than its goal's for follow-ups, not off-goal (context-6)", () => {
    // context-5 judged German and Spanish prompts by English words: 78.3% called off, a drift in 66.7% of the sessions.
    const f = evaluate(inOtherLanguages).figures
    const got = { called_off: f.on_goal_called_off, false_drift: f.on_goal_sessions_drift_fired }
    expect({ got, held: got.called_off <= 0.043 && got.false_drift === 0 }).toEqual({ got, held: true })
  })

  it("judges records accepted before context-2 as they were judged then (lexical-1)", () => {
    // The corpus's figures under the method that was in force before: a replay of an old log folds the same.
    const { figures } = evaluate(development, { method: "lexical-1" })
    expect(figures).toMatchObject({ on_goal_called_off: 0.702, off_goal_recall: 0.958, on_goal_sessions_drift_fired: 0.893 })
  })
})
