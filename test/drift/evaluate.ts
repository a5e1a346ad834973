/**
 * Runs the corpus through the engine's own fold (src/domain/user-fold.ts), as an adapter's signals
 * would reach it, and counts what a user would see: which prompts were judged off-goal, and which
 * sessions got a goal-drift signal, and when. Used by test/unit/drift-corpus.test.ts (the targets)
 * and by `npm run bench -- --scenarios drift` (the figures and the cost).
 */
import { type DriftMethod, driftMethod, isThin } from "../../src/domain/drift.ts"
import type { GoalRecord, LogRecord, SignalRecord } from "../../src/domain/records.ts"
import type { FoldResult } from "../../src/domain/fold-result.ts"
import { defaultFoldSettings, type FoldSettings, type UserState } from "../../src/domain/user-state.ts"
import { type CorpusGoal, isPrompt } from "./corpus.ts"
import { goalTimingSessions } from "./goal-timing.ts"
import { thinTaskSessions } from "./thin-tasks.ts"
import { firstDriftAt, firstHalf, goalRecord, interleaved, recordsOf, run, type Run, runAnswering } from "./replay.ts"

export { firstHalf, recordsOf, run }

export type Judgement = "on-goal" | "off-goal" | "unjudged"

export interface JudgedPrompt {
  readonly goal: string
  readonly prompt: string
  readonly expected: "on-goal" | "off-goal"
  /** work: the goal's session; off: asked alone mid-work; drift: in the thread the user drifted into. */
  readonly where: "work" | "off" | "drift"
  readonly got: Judgement
}

export interface SessionOutcome {
  readonly goal: string
  /**
   * beside-work and beside-drift: the goal's work and the drifted session, run by one user at once (parallel agents);
   * later-drift: the other work alone, in a new session after a session of the goal's work (drifted from its first prompt);
   * continued: the goal's work taken up again in a new session, after a session of its first half;
   * refined and another-goal: the goal's work with a goal command after its first half (the goal's
   * description refined, another goal set), the work going on; goal-later to two-goals-drift: goals set around the
   * work (goal-timing.ts); thin-…: several tasks under a thin goal (thin-tasks.ts).
   */
  readonly session:
    | "work"
    | "aside"
    | "drifted"
    | "beside-work"
    | "beside-drift"
    | "later-drift"
    | "continued"
    | "refined"
    | "another-goal"
    | "goal-later"
    | "goal-after-other"
    | "two-goals"
    | "two-goals-switch"
    | "two-goals-drift"
    | "thin-next-task"
    | "thin-next-session"
    | "thin-other-kind"
    | "answered-work"
    | "work-again"
    | "late-work-again"
    | "unanswered-again"
  /**
   * A work session with a false drift, its prompts after the drift: answered-work, the user answered it as the goal's
   * work; work, unanswered. work-again and unanswered-again: the same work in a new session after either (late-work-again:
   * after one answered a prompt late). continued: all its prompts; refined and another-goal: those after the command;
   * goal-later: those after the goal was set; two-goals: all; two-goals-switch and thin-next-…: the other goal's.
   */
  readonly afterDrift?: { readonly prompts: number; readonly calledOff: number }
  /** Drift signals the session got. */
  readonly fired: number
  /** For drifted: the prompt of the drift thread (1-based) at which the first drift fired. */
  readonly firedAt?: number
  /** Drift signals whose evidence has a prompt of another session. */
  readonly foreign?: number
}

export interface Options {
  readonly settings?: FoldSettings
  /** The detector acceptance stamps on the records; the engine's by default. */
  readonly method?: DriftMethod
}

const judgementOf = (result: FoldResult): Judgement => result.judged ?? "unjudged"

/** Every prompt's judgement and every session's drift signals, for the goals given. */
export const evaluate = (goals: ReadonlyArray<CorpusGoal>, options: Options = {}) => {
  const settings = options.settings ?? defaultFoldSettings
  const stamp = options.method ?? driftMethod
  const prompts: Array<JudgedPrompt> = []
  const sessions: Array<SessionOutcome> = []
  for (const [i, goal] of goals.entries()) {
    const set = run([goalRecord(goal, stamp)], settings).state
    const prompted = (r: { readonly record: LogRecord }) => r.record.kind === "signal" && r.record.type === "user-prompt"
    const textOf = (r: { readonly record: LogRecord }) => String((r.record as SignalRecord).metadata.prompt)

    const work = run(recordsOf(goal, goal.work, `${goal.id}:work`, stamp), settings, set)
    for (const r of work.results.filter(prompted)) prompts.push({ goal: goal.id, prompt: textOf(r), expected: "on-goal", where: "work", got: judgementOf(r.result) })
    sessions.push({ goal: goal.id, session: "work", fired: work.results.filter((r) => r.result.drift).length })

    if (work.results.some((r) => r.result.drift)) {
      // A false drift: the rest of the session and the same work in a new session, unanswered and answered as the goal's work.
      const afterDrift = (results: Run["results"]) => {
        const after = results.slice(results.findIndex((r) => r.result.drift) + 1).filter(prompted)
        return { prompts: after.length, calledOff: after.filter((r) => r.result.judged === "off-goal").length }
      }
      const answered = runAnswering(recordsOf(goal, goal.work, `${goal.id}:answered`, stamp), settings, set)
      const fired = (from: UserState, session: string) =>
        run(recordsOf(goal, goal.work, `${goal.id}:${session}`, stamp), settings, from).results.filter((r) => r.result.drift).length
      // Answered a prompt later, when the session may be back on the goal.
      const late = runAnswering(recordsOf(goal, goal.work, `${goal.id}:answered-late`, stamp), settings, set, 1)
      sessions.push(
        { goal: goal.id, session: "answered-work", fired: answered.results.filter((r) => r.result.drift).length, afterDrift: afterDrift(answered.results) },
        { goal: goal.id, session: "work-again", fired: fired(answered.state, "again") },
        { goal: goal.id, session: "late-work-again", fired: fired(late.state, "late-again") },
        { goal: goal.id, session: "unanswered-again", fired: fired(work.state, "unanswered-again"), afterDrift: afterDrift(work.results) }
      )
    }

    // The next session is other work: the user's context is the whole of the goal's work.
    const later = run(recordsOf(goal, goal.drift, `${goal.id}:later`, stamp), settings, work.state).results
    const laterAt = later.filter(prompted).findIndex((r) => r.result.drift)
    sessions.push({ goal: goal.id, session: "later-drift", fired: later.filter((r) => r.result.drift).length, ...(laterAt >= 0 ? { firedAt: laterAt + 1 } : {}) })

    const half = firstHalf(goal.work)
    const rest = goal.work.slice(half.length)
    // The goal's work again after a break: the second half in a new session, the context the first half's.
    const first = run(recordsOf(goal, half, `${goal.id}:first`, stamp), settings, set).state
    const continued = run(recordsOf(goal, rest, `${goal.id}:continued`, stamp), settings, first).results
    const continuedPrompts = continued.filter(prompted)
    sessions.push({
      goal: goal.id, session: "continued", fired: continued.filter((r) => r.result.drift).length,
      afterDrift: { prompts: continuedPrompts.length, calledOff: continuedPrompts.filter((r) => r.result.judged === "off-goal").length }
    })
    // A goal command after the first half, the work going on in the same session.
    const commands: ReadonlyArray<readonly ["refined" | "another-goal", GoalRecord]> = [
      ["refined", { ...goalRecord(goal, stamp), command_id: `gcmd_${goal.id}_refined`, op: "update", description: `${goal.goal}, with tests` }],
      ["another-goal", { ...goalRecord(goal, stamp), command_id: `gcmd_${goal.id}_other`, goal_id: `goal_${goal.id}_other`, description: "Write the release notes for 2.4" }]
    ]
    for (const [kind, command] of commands) {
      const records = recordsOf(goal, goal.work, `${goal.id}:${kind}`, stamp)
      const cut = recordsOf(goal, half, `${goal.id}:${kind}`, stamp).length
      const upToCommand = run([...records.slice(0, cut), command], settings, set).state
      const after = run(records.slice(cut), settings, upToCommand).results
      const afterPrompts = after.filter(prompted)
      sessions.push({
        goal: goal.id, session: kind, fired: after.filter((r) => r.result.drift).length,
        afterDrift: { prompts: afterPrompts.length, calledOff: afterPrompts.filter((r) => r.result.judged === "off-goal").length }
      })
    }
    const before = run(recordsOf(goal, half, `${goal.id}:off`, stamp), settings, set).state
    goal.off.forEach((prompt, i) => {
      const alone = run(recordsOf(goal, [prompt], `${goal.id}:off`, stamp).map((r) => ({ ...r, signal_id: `${r.signal_id}_${i}` })), settings, before)
      prompts.push({ goal: goal.id, prompt, expected: "off-goal", where: "off", got: judgementOf(alone.results[0]!.result) })
    })

    const aside = run(recordsOf(goal, [...half, goal.off[0]!, ...rest], `${goal.id}:aside`, stamp), settings, set)
    sessions.push({ goal: goal.id, session: "aside", fired: aside.results.filter((r) => r.result.drift).length })

    const driftRecords = recordsOf(goal, [...half, ...goal.drift], `${goal.id}:drift`, stamp)
    const drifted = run(driftRecords, settings, set)
    const outcome = (results: Run["results"], record: (r: Run["results"][number]) => void) => {
      const firstDrift = results.filter(prompted).length - goal.drift.filter(isPrompt).length
      results.filter(prompted).slice(firstDrift).forEach(record)
      const firedAt = firstDriftAt(results, firstDrift)
      return { fired: results.filter((r) => r.result.drift).length, ...(firedAt !== undefined ? { firedAt } : {}) }
    }
    sessions.push({
      goal: goal.id, session: "drifted",
      ...outcome(drifted.results, (r) => prompts.push({ goal: goal.id, prompt: textOf(r), expected: "off-goal", where: "drift", got: judgementOf(r.result) }))
    })

    // The same drifted session while another session of the user's works on the goal.
    const besideWork = recordsOf(goal, goal.work, `${goal.id}:beside`, stamp)
    const both = run(interleaved(besideWork, driftRecords), settings, set).results
    const ids = (records: ReadonlyArray<SignalRecord>) => new Set(records.map((r) => r.signal_id))
    const [workIds, driftIds] = [ids(besideWork), ids(driftRecords)]
    const foreign = (results: Run["results"], own: Set<string>) =>
      results.filter((r) => r.result.drift?.evidence.some((e) => !own.has(e.signal_id))).length
    const inWork = both.filter((r) => workIds.has((r.record as SignalRecord).signal_id))
    const inDrift = both.filter((r) => driftIds.has((r.record as SignalRecord).signal_id))
    sessions.push({ goal: goal.id, session: "beside-work", fired: inWork.filter((r) => r.result.drift).length, foreign: foreign(inWork, workIds) })
    sessions.push({ goal: goal.id, session: "beside-drift", ...outcome(inDrift, () => {}), foreign: foreign(inDrift, driftIds) })
    sessions.push(...goalTimingSessions(goal, goals[(i + 1) % goals.length]!, stamp, settings))
    if (isThin([{ id: goal.id, description: goal.goal }])) {
      const others = [...goals.slice(i + 1), ...goals.slice(0, i)]
      const next = others.find((g) => g.kind === goal.kind || goal.anyWork)
      sessions.push(...thinTaskSessions(goal, next, goal.anyWork ? undefined : others.find((g) => g.kind !== goal.kind), stamp, settings))
    }
  }
  return { prompts, sessions, figures: figures(prompts, sessions) }
}

const ratio = (n: number, d: number) => (d === 0 ? 0 : Math.round((n / d) * 1000) / 1000)

/** The figures the targets are set on. */
export const figures = (prompts: ReadonlyArray<JudgedPrompt>, sessions: ReadonlyArray<SessionOutcome>) => {
  const on = prompts.filter((p) => p.expected === "on-goal")
  const off = prompts.filter((p) => p.expected === "off-goal")
  const calm = sessions.filter((s) => s.session === "work" || s.session === "aside")
  const drifted = sessions.filter((s) => s.session === "drifted")
  const besideWork = sessions.filter((s) => s.session === "beside-work")
  const besideDrift = sessions.filter((s) => s.session === "beside-drift")
  const laterDrift = sessions.filter((s) => s.session === "later-drift")
  const afterDrift = (kind: SessionOutcome["session"]) => sessions.flatMap((s) => (s.session === kind && s.afterDrift ? [s.afterDrift] : []))
  const calledOff = (a: ReadonlyArray<{ readonly prompts: number; readonly calledOff: number }>) =>
    ratio(a.reduce((n, x) => n + x.calledOff, 0), a.reduce((n, x) => n + x.prompts, 0))
  const againFired = (kind: SessionOutcome["session"]) => {
    const again = sessions.filter((s) => s.session === kind)
    return ratio(again.filter((s) => s.fired > 0).length, again.length)
  }
  const foundWithin3 = (kind: SessionOutcome["session"]) => {
    const of = sessions.filter((s) => s.session === kind)
    return ratio(of.filter((s) => s.firedAt !== undefined && s.firedAt <= 3).length, of.length)
  }
  return {
    on_goal_prompts: on.length,
    on_goal_called_off: ratio(on.filter((p) => p.got === "off-goal").length, on.length),
    off_goal_prompts: off.length,
    off_goal_recall: ratio(off.filter((p) => p.got === "off-goal").length, off.length),
    off_goal_recall_alone: ratio(off.filter((p) => p.where === "off" && p.got === "off-goal").length, off.filter((p) => p.where === "off").length),
    off_goal_recall_in_thread: ratio(off.filter((p) => p.where === "drift" && p.got === "off-goal").length, off.filter((p) => p.where === "drift").length),
    on_goal_sessions: calm.length,
    on_goal_sessions_drift_fired: ratio(calm.filter((s) => s.fired > 0).length, calm.length),
    drifted_sessions: drifted.length,
    drift_found_within_3: ratio(drifted.filter((s) => s.firedAt !== undefined && s.firedAt <= 3).length, drifted.length),
    drift_found_at_all: ratio(drifted.filter((s) => s.firedAt !== undefined).length, drifted.length),
    parallel_drift_found_within_3: ratio(besideDrift.filter((s) => s.firedAt !== undefined && s.firedAt <= 3).length, besideDrift.length),
    parallel_work_drift_fired: ratio(besideWork.filter((s) => s.fired > 0).length, besideWork.length),
    new_session_drift_found_within_3: ratio(laterDrift.filter((s) => s.firedAt !== undefined && s.firedAt <= 3).length, laterDrift.length),
    continued_called_off: calledOff(afterDrift("continued")),
    continued_drift_fired: againFired("continued"),
    goal_command_called_off: calledOff([...afterDrift("refined"), ...afterDrift("another-goal")]),
    goal_command_drift_fired: ratio(sessions.filter((s) => (s.session === "refined" || s.session === "another-goal") && s.fired > 0).length, sessions.filter((s) => s.session === "refined" || s.session === "another-goal").length),
    work_sessions_with_false_drift: afterDrift("answered-work").length,
    after_false_drift_called_off: calledOff(afterDrift("unanswered-again")),
    after_false_drift_new_session_drift_fired: againFired("unanswered-again"),
    answered_called_off: calledOff(afterDrift("answered-work")),
    answered_new_session_drift_fired: againFired("work-again"),
    answered_late_new_session_drift_fired: againFired("late-work-again"),
    goal_later_called_off: calledOff(afterDrift("goal-later")),
    goal_later_drift_fired: againFired("goal-later"),
    goal_after_other_found_within_3: foundWithin3("goal-after-other"),
    two_goals_called_off: calledOff([...afterDrift("two-goals"), ...afterDrift("two-goals-switch")]),
    two_goals_drift_fired: ratio(sessions.filter((s) => (s.session === "two-goals" || s.session === "two-goals-switch") && s.fired > 0).length, sessions.filter((s) => s.session === "two-goals" || s.session === "two-goals-switch").length),
    two_goals_drift_found_within_3: foundWithin3("two-goals-drift"),
    thin_next_task_called_off: calledOff(afterDrift("thin-next-task")),
    thin_next_task_drift_fired: againFired("thin-next-task"),
    thin_next_session_called_off: calledOff(afterDrift("thin-next-session")),
    thin_next_session_drift_fired: againFired("thin-next-session"),
    thin_other_kind_found_within_3: foundWithin3("thin-other-kind"),
    parallel_drifts_with_foreign_evidence: [...besideWork, ...besideDrift].reduce((n, s) => n + (s.foreign ?? 0), 0)
  }
}
export type Figures = ReturnType<typeof figures>
