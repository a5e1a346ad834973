import { describe, expect, it } from "@effect/vitest"
import { driftStateOf, maxDriftSessions, sessionStreakOf } from "../../src/domain/drift-fold.ts"
import { type DriftMethod, driftMethod } from "../../src/domain/drift.ts"
import type { FoldResult } from "../../src/domain/fold-result.ts"
import type { GoalRecord, LogRecord, SessionTimeoutRecord, SignalRecord } from "../../src/domain/records.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import { goalAt, signalAt } from "../support/log-records.ts"

/**
 * Goal drift per session (context-3): one user's parallel agents, one on the goal and one on other
 * work, neither reset nor feed each other's streak, and a drift's evidence is its own session's;
 * and the folders Gemini CLI's tools name count as context.
 */
let seq = 0
const at = (second: number) => new Date(Date.parse("2026-11-22T10:00:00.000Z") + second * 1000).toISOString()
const signal = (session: string, type: SignalRecord["type"], metadata: Record<string, unknown> = {}, method: DriftMethod = driftMethod) =>
  signalAt({
    at: Date.parse(at(++seq)),
    signal_id: `sig_${session}_${seq}`,
    type,
    client_session_id: session,
    metadata: { cwd: "/home/dev/auth-service", ...metadata },
    drift_method: method
  })
const prompt = (session: string, text: string, method?: DriftMethod) => signal(session, "user-prompt", { prompt: text }, method)
const login = goalAt({ op: "create", ts: at(0), description: "Fix the login bug in the auth service" })
const onGoal = ["why does the sign-in endpoint return 500 for unicode passwords", "normalize the password before hashing in the login handler",
  "add a login test with an emoji password", "the sign-in test still fails, check the password hashing"]
const offGoal = ["write a toast for my sister's wedding, funny but kind", "what's the difference between a roth ira and a traditional one",
  "recommend some jazz records for a dinner party", "plan a weekend in lisbon for two"]

const foldAll = (records: ReadonlyArray<LogRecord>, start: UserState = emptyUserState) => {
  let state = start
  const results: Array<{ record: LogRecord; result: FoldResult }> = []
  for (const [offset, record] of records.entries()) {
    const result = fold(state, record, { partition: 0, offset })
    state = result.state
    results.push({ record, result })
  }
  return { state, results }
}
const sessionOf = (run: ReturnType<typeof foldAll>, client: string) =>
  run.results.find((r) => r.record.kind === "signal" && r.record.client_session_id === client)!.result.sessionId!
const drifts = (run: ReturnType<typeof foldAll>) =>
  run.results.flatMap((r) => (r.result.drift && r.record.kind === "signal" ? [{ session: r.record.client_session_id, drift: r.result.drift }] : []))

/** Agent A works on the goal while agent B, started at the same time, goes off it: their prompts alternate. */
const parallel = (
  method: DriftMethod = driftMethod
) => [login, prompt("A", onGoal[0]!, method), prompt("B", onGoal[1]!, method),
  ...offGoal.slice(0, 3).flatMap((off, i) => [prompt("A", onGoal[i + 1]!, method), prompt("B", off, method)])]

describe("goal drift per session", () => {
  it("finds the drift of one agent while another works on the goal, with that agent's prompts as evidence", () => {
    const run = foldAll(parallel())
    const found = drifts(run)
    expect(found.map((d) => d.session)).toEqual(["B"])
    expect(found[0]!.drift.evidence.map((e) => e.prompt)).toEqual(offGoal.slice(0, 3).map((p) => p.slice(0, 60)))
    expect(found[0]!.drift.evidence.every((e) => e.signal_id.startsWith("sig_B_"))).toBe(true)
    expect(sessionStreakOf(run.state, "live", sessionOf(run, "A")).streak).toBe(0)
    expect(sessionStreakOf(run.state, "live", sessionOf(run, "B")).streak).toBe(3)
  })

  it("replays records stamped context-2 as they were judged: one streak per user, which the other agent resets", () => {
    expect(drifts(foldAll(parallel("context-2")))).toEqual([])
  })

  it("names the goal the drifting session was on when parallel agents work on different goals", () => {
    const billing = goalAt({ op: "create", ts: at(0), goal_id: "goal_billing", description: "Add a CSV export of invoices to the billing page" })
    const billingWork = ["the invoice csv export needs the tax column", "download the invoices csv from the billing page in the test"]
    const run = foldAll([
      login,
      billing,
      prompt("B", billingWork[0]!),
      prompt("A", onGoal[0]!),
      prompt("B", billingWork[1]!),
      ...offGoal.slice(0, 3).flatMap((off, i) => [prompt("A", onGoal[i + 1]!), prompt("B", off)])
    ])
    expect(drifts(run).map((d) => [d.session, d.drift.goal_id])).toEqual([["B", "goal_billing"]])
    expect(driftStateOf(run.state, "live").goal_id).toBe("goal_login")
  })

  it("lets a refocus-ack answer its own session's drift, or every session's from one that was not off-goal", () => {
    const both = [login, ...offGoal.slice(0, 2).flatMap((off) => [prompt("A", off), prompt("B", off)])]
    const start = foldAll(both)
    const [a, b] = [sessionOf(start, "A"), sessionOf(start, "B")]
    const own = foldAll([signal("A", "refocus-ack")], start.state)
    expect([sessionStreakOf(own.state, "live", a).streak, sessionStreakOf(own.state, "live", b).streak]).toEqual([0, 2])
    const elsewhere = foldAll([signal("C", "refocus-ack")], start.state)
    expect([sessionStreakOf(elsewhere.state, "live", a).streak, sessionStreakOf(elsewhere.state, "live", b).streak]).toEqual([0, 0])
    // The streak starts over: two more off-goal prompts in B are no drift.
    expect(drifts(foldAll([prompt("B", offGoal[2]!), prompt("B", offGoal[3]!)], elsewhere.state))).toEqual([])
  })

  it("forgets a session's streak when it ends or times out, keeping the user's context", () => {
    const start = foldAll([login, prompt("A", onGoal[0]!), prompt("B", offGoal[0]!), prompt("C", offGoal[1]!)])
    const [b, c] = [sessionOf(start, "B"), sessionOf(start, "C")]
    expect(Object.keys(driftStateOf(start.state, "live").sessions ?? {}).sort()).toEqual([b, c].sort())
    const ended = foldAll([signal("B", "session-end")], start.state)
    expect(Object.keys(driftStateOf(ended.state, "live").sessions ?? {})).toEqual([c])
    const tick: SessionTimeoutRecord = {
      v: 1,
      kind: "session-timeout",
      org_id: "org_1",
      environment: "live",
      user_id: "user_a",
      ts: at(9_999),
      session_id: c,
      last_activity_at: ended.state.open[Object.keys(ended.state.open).find((k) => ended.state.open[k]!.id === c)!]!.last_activity_at
    }
    const timedOut = foldAll([tick], ended.state)
    expect(driftStateOf(timedOut.state, "live").sessions).toBeUndefined()
    expect(driftStateOf(timedOut.state, "live").context).toBe(driftStateOf(start.state, "live").context)
  })

  it("keeps at most a bounded number of off-goal sessions, dropping the one whose streak began first", () => {
    const clients = Array.from({ length: maxDriftSessions + 2 }, (_, i) => `agent-${i}`)
    const run = foldAll([login, ...clients.map((c, i) => prompt(c, offGoal[i % offGoal.length]!))])
    const kept = driftStateOf(run.state, "live").sessions ?? {}
    expect(Object.keys(kept).sort()).toEqual(clients.slice(2).map((c) => sessionOf(run, c)).sort())
  })

  it("does not carry a streak kept per user before context-3 into a session", () => {
    const before = foldAll([login, prompt("A", offGoal[0]!, "context-2"), prompt("A", offGoal[1]!, "context-2")])
    expect(driftStateOf(before.state, "live").streak).toBe(2)
    const after = foldAll([prompt("A", offGoal[2]!)], before.state)
    expect(drifts(after)).toEqual([])
    expect(driftStateOf(after.state, "live").streak).toBe(0)
    expect(sessionStreakOf(after.state, "live", sessionOf(before, "A")).streak).toBe(1)
  })
})

describe("goal drift's context from every tool's calls", () => {
  it("counts the folders Gemini CLI lists and searches (dir_path) as the session's context", () => {
    const listed = (method: DriftMethod) =>
      foldAll([
        login,
        prompt("G", onGoal[0]!, method),
        signal("G", "post-tool", { tool_name: "list_directory", tool_input: { dir_path: "/home/dev/auth-service/src/ratelimiter" } }, method),
        prompt("G", "the ratelimiter lockout window is far too short", method)
      ]).results.at(-1)!.result.judged
    expect([listed("context-2"), listed(driftMethod)]).toEqual(["off-goal", "on-goal"])
  })
})

describe("the org's own goal-drift streak (drift_prompts stamped at acceptance)", () => {
  const offRun = (stamp: Partial<SignalRecord>) =>
    foldAll([login, ...offGoal.map((p) => ({ ...prompt("A", p), ...stamp }))]).results.filter((r) => r.record.kind === "signal")
  const driftAt = (stamp: Partial<SignalRecord>) => offRun(stamp).findIndex((r) => r.result.drift) + 1

  it("makes a drift after the org's number of off-goal prompts, with that many as evidence", () => {
    expect(driftAt({})).toBe(3)
    expect(driftAt({ drift_prompts: 2 })).toBe(2)
    expect(driftAt({ drift_prompts: 4 })).toBe(4)
    const drift = offRun({ drift_prompts: 2 }).find((r) => r.result.drift)!.result.drift!
    expect(drift.off_goal_prompts).toBe(2)
    expect(drift.evidence.map((e) => e.prompt)).toEqual(offGoal.slice(0, 2).map((p) => p.slice(0, 60)))
  })

  it("makes none when the org's number is 0, though the prompts are still judged off-goal", () => {
    const run = offRun({ drift_prompts: 0 })
    expect(run.filter((r) => r.result.drift)).toEqual([])
    expect(run.map((r) => r.result.judged)).toEqual(["off-goal", "off-goal", "off-goal", "off-goal"])
  })

  it("makes one drift per streak when the org's number changes during it (context-7)", () => {
    // The number as each of the four off-goal prompts was accepted.
    const drifts = (numbers: ReadonlyArray<number>, method: DriftMethod = driftMethod) =>
      foldAll([{ ...login, drift_method: method }, ...offGoal.map((p, i) => ({ ...prompt("A", p, method), drift_prompts: numbers[i]! }))]).results
        .filter((r) => r.record.kind === "signal").map((r) => r.result.drift?.off_goal_prompts ?? 0)
    // Lowered below a streak already longer: the drift comes at the next off-goal prompt.
    expect(drifts([5, 5, 5, 2])).toEqual([0, 0, 0, 4])
    // Raised past a streak that has made its drift: no second one.
    expect(drifts([2, 2, 4, 4])).toEqual([0, 2, 0, 0])
    // Records stamped before context-7 replay as judged: a drift whenever the streak met the number exactly.
    expect(drifts([5, 5, 5, 2], "context-6")).toEqual([0, 0, 0, 0])
    expect(drifts([2, 2, 4, 4], "context-6")).toEqual([0, 2, 0, 4])
  })
})

describe("a thin goal (naming no task, only a kind of work) takes the first prompts as its work (context-6)", () => {
  const bugs = goalAt({ op: "create", ts: at(0), description: "Fix bugs" })
  const work = ["why does the sign-in endpoint return 500 for unicode passwords", "normalize the password before hashing in the login handler",
    "the session cookie is not refreshed after the password reset, trace it through middleware/session.ts",
    "add a regression test with an emoji password and the nfkc form", "the sign-in test still fails, check the bcrypt cost settings"]
  const run = (method: DriftMethod, prompts: ReadonlyArray<string>) =>
    foldAll([{ ...bugs, drift_method: method }, ...prompts.map((p) => prompt("A", p, method))]).results.filter((r) => r.record.kind === "signal")

  it("raises no drift on the work that says what the goal is; records stamped before context-6 replay their drift", () => {
    expect(run(driftMethod, work).filter((r) => r.result.drift)).toEqual([])
    expect(run("context-5", work).filter((r) => r.result.drift).length).toBe(1)
  })

  it("once the session has said what its work is, other work drifts from it", () => {
    const results = run(driftMethod, [...work, ...offGoal])
    expect(results.slice(0, work.length).map((r) => r.result.judged)).toEqual(work.map(() => "on-goal"))
    expect(results.findIndex((r) => r.result.drift)).toBe(work.length + 2)
  })
})

describe("several tasks under a thin goal (context-7)", () => {
  const bugs = goalAt({ op: "create", ts: at(0), description: "Fix bugs" })
  const firstBug = ["why does the sign-in endpoint return 500 for unicode passwords", "normalize the password before hashing in the login handler",
    "the session cookie is not refreshed after the password reset, trace it through middleware/session.ts",
    "add a regression test with an emoji password and the nfkc form", "the sign-in test still fails, check the bcrypt cost settings"]
  // The next bug, in words the first one never used, and no word that says it is a bug.
  const secondBug = ["invoices generated on the last day of the month get next month's number", "look at numbering.py and the sequence per tenant",
    "use the invoice date, not today, when picking the sequence", "backfill the numbers of the march invoices"]
  const run = (method: DriftMethod, records: ReadonlyArray<LogRecord>) =>
    foldAll([{ ...bugs, drift_method: method }, ...records]).results.filter((r) => r.record.kind === "signal")

  it("takes the next task in a new session for the goal's work: each session says what its work is", () => {
    const sessions = (method: DriftMethod) => [...firstBug.map((p) => prompt("A", p, method)), ...secondBug.map((p) => prompt("B", p, method))]
    expect(run(driftMethod, sessions(driftMethod)).filter((r) => r.result.drift)).toEqual([])
    // context-6 records replay as judged: the user's context, full of the first bug, called the second off.
    expect(run("context-6", sessions("context-6")).filter((r) => r.result.drift).length).toBe(1)
  })

  it("takes a prompt that shows the goal's kind of work for its work in the same session; work of another kind drifts", () => {
    const crash = "the csv export crashes with a null pointer exception on empty rows"
    const results = run(driftMethod, [...firstBug, crash, ...offGoal.slice(0, 3)].map((p) => prompt("A", p)))
    expect(results.map((r) => r.result.judged)).toEqual([...firstBug.map(() => "on-goal"), "on-goal", "off-goal", "off-goal", "off-goal"])
    expect(results.findIndex((r) => r.result.drift)).toBe(firstBug.length + 3)
    const replayed = run("context-6", [...firstBug, crash].map((p) => prompt("A", p, "context-6")))
    expect(replayed.at(-1)!.result.judged).toBe("off-goal")
  })
})

describe("a goal command keeps the context while a goal is active (context-6)", () => {
  const contextAfter = (commands: ReadonlyArray<Partial<GoalRecord> & Pick<GoalRecord, "op">>, method: DriftMethod = driftMethod) => {
    const records = [{ ...login, drift_method: method }, ...onGoal.map((p) => prompt("A", p, method)),
      ...commands.map((c, i) => goalAt({ ts: at(100 + i), drift_method: method, ...c }))]
    return driftStateOf(foldAll(records).state, "live").context ?? ""
  }

  it("keeps it when the goal is refined or another set, and starts it over when no goal is left or a thin one is set", () => {
    const worked = contextAfter([])
    expect(worked).toContain("password")
    expect(contextAfter([{ op: "update", description: "Fix the login bug in the auth service, SSO included" }])).toBe(worked)
    expect(contextAfter([{ op: "create", goal_id: "goal_notes", description: "Write the release notes for 2.4" }])).toBe(worked)
    expect(contextAfter([{ op: "update", status: "completed" }])).toBe("")
    expect(contextAfter([{ op: "create", goal_id: "goal_bugs", description: "Fix bugs" }])).toBe("")
    // Records stamped before context-6 replay as they were judged: every goal command started it over.
    expect(contextAfter([{ op: "update", description: "Fix the login bug in the auth service, SSO included" }], "context-5")).toBe("")
  })
})

describe("a goal set once the work has begun (context-7)", () => {
  // The work before the goal: the login bug, asked about while no goal was active.
  const before = ["why does the sign-in endpoint return 500 for unicode passwords", "normalize the password with nfkc before the bcrypt hashing"]
  // Prompts that only the earlier prompts' words make the goal's work.
  const goingOn = ["nfkc and bcrypt disagree on emoji, look at the byte lengths", "run the emoji case through nfkc before bcrypt in the handler",
    "compare the bcrypt byte lengths of the nfkc and nfd forms"]
  const run = (method: DriftMethod, goal: string, prompts: ReadonlyArray<string>) =>
    foldAll([...before.map((p) => prompt("A", p, method)), goalAt({ op: "create", ts: at(500), description: goal, drift_method: method }), ...prompts.map((p) =>
      prompt("A", p, method)
    )]).results.slice(before.length + 1)

  it("takes the work going on for the goal's when the goal names it; context-6 records judged it by the goal's words alone", () => {
    const goal = "Fix the 500 from the sign-in endpoint"
    expect(run(driftMethod, goal, goingOn).map((r) => r.result.judged)).toEqual(goingOn.map(() => "on-goal"))
    const replayed = run("context-6", goal, goingOn)
    expect(replayed.some((r) => r.result.judged === "off-goal")).toBe(true)
  })

  it("does not take the work before a goal set for other work for the goal's: going back to it drifts", () => {
    const results = run(driftMethod, "Write the release notes for 2.4", ["collect the merged pull requests since 2.3 into the release notes", ...goingOn])
    expect(results.map((r) => r.result.judged)).toEqual(["on-goal", "off-goal", "off-goal", "off-goal"])
    expect(results.findIndex((r) => r.result.drift)).toBe(3)
  })
})
