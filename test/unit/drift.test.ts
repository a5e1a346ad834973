import { describe, expect, it } from "@effect/vitest"
import { driftStateOf, sessionStreakOf } from "../../src/domain/drift-fold.ts"
import { showsKind } from "../../src/domain/drift-kinds.ts"
import { contextSize, driftMethod, isThin, judge, threadSize } from "../../src/domain/drift.ts"
import { languageOf } from "../../src/domain/drift-language.ts"
import { development, fresh, freshTwo, held, isPrompt, wide } from "../drift/corpus.ts"
import type { FoldResult } from "../../src/domain/fold-result.ts"
import type { GoalRecord, LogRecord, SignalRecord } from "../../src/domain/records.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { emptyUserState, type UserState } from "../../src/domain/user-state.ts"
import { goalAt } from "../support/log-records.ts"

let seq = 0
const at = (second: number) => new Date(Date.parse("2026-11-22T10:00:00.000Z") + second * 1000).toISOString()
const signal = (type: SignalRecord["type"], metadata: Record<string, unknown>): SignalRecord => {
  seq++
  return {
    v: 1,
    kind: "signal",
    org_id: "org_1",
    environment: "live",
    user_id: "user_a",
    ts: at(seq),
    signal_id: `sig_${seq}`,
    type,
    adapter: "claude-code",
    client_session_id: "cs",
    metadata: { cwd: "/home/dev/auth-service", ...metadata },
    session_timeout_s: 1800,
    cost: { usd: 0, estimated: false, model_known: true },
    drift_method: driftMethod
  }
}
const prompt = (text: string) => signal("user-prompt", { prompt: text })
const read = (path: string) => signal("post-tool", { tool_name: "Read", tool_input: JSON.stringify({ file_path: `/home/dev/auth-service/${path}` }) })
const goal = (over: Partial<GoalRecord> & Pick<GoalRecord, "op">): GoalRecord => goalAt({ ts: at(0), ...over })
const login = goal({ op: "create", description: "Fix the login bug in the auth service" })

const foldAll = (records: ReadonlyArray<LogRecord>, start: UserState = emptyUserState) => {
  let state = start
  const results: Array<FoldResult> = []
  for (const [offset, r] of records.entries()) {
    const out = fold(state, r, { partition: 0, offset })
    state = out.state
    results.push(out)
  }
  return { state, results }
}

const offGoal = ["write a toast for my sister's wedding, funny but kind", "what's the difference between a roth ira and a traditional one",
  "recommend some jazz records for a dinner party"]

describe(`goal drift (${driftMethod})`, () => {
  it("takes the work the issue reported as drift for what it is: on-goal", () => {
    const { results } = foldAll([
      login,
      prompt("why does the sign-in endpoint return 500 when the password has unicode characters"),
      read("src/auth/session.ts"),
      prompt("run the tests again"),
      prompt("look at src/auth/session.ts, the hashing happens before we normalize the input"),
      prompt("commit this with a good message")
    ])
    expect(results.flatMap((r) => (r.judged ? [r.judged] : []))).toEqual(["on-goal", "on-goal", "on-goal", "on-goal"])
    expect(results.some((r) => r.drift)).toBe(false)
  })

  it("reports which goal, since when and on what evidence, once per streak", () => {
    const offs = offGoal.map(prompt)
    const { results } = foldAll([login, prompt("why does the sign-in endpoint return 500 for unicode passwords"), ...offs,
      prompt("and one more record for later")])
    const drifts = results.flatMap((r) => (r.drift ? [r.drift] : []))
    expect(drifts).toEqual([{
      goal_id: "goal_login",
      goal: "Fix the login bug in the auth service",
      score: 0,
      off_goal_prompts: 3,
      signal_id: offs[2]!.signal_id,
      since: offs[0]!.ts,
      evidence: offs.map((o) => ({ signal_id: o.signal_id, prompt: String(o.metadata.prompt).slice(0, 60) })),
      method: driftMethod
    }])
  })

  it("lets the user answer a drift: a refocus-ack or a goal update starts the streak over", () => {
    const { state: start, results } = foldAll([login, ...offGoal.slice(0, 2).map(prompt)])
    const session = results[1]!.sessionId!
    expect(sessionStreakOf(start, "live", session).streak).toBe(2)
    const acked = foldAll([signal("refocus-ack", {}), ...offGoal.slice(0, 2).map(prompt)], start)
    expect(acked.results.some((r) => r.drift)).toBe(false)
    const updated = foldAll([goal({ op: "update", description: "Fix the login bug and plan the team dinner" }), ...offGoal.slice(0, 2).map(prompt)], start)
    expect(updated.results.some((r) => r.drift)).toBe(false)
    expect(sessionStreakOf(updated.state, "live", session).streak).toBe(2)
  })

  it("judges follow-ups and commands by the thread they are in", () => {
    const goals = [{ id: "g", description: "Fix the login bug in the auth service" }]
    expect(judge("run the tests again", goals, undefined).verdict).toBe("follow-up")
    expect(judge("pytest tests/auth -x", goals, undefined).verdict).toBe("follow-up")
    expect(judge("use NFKC there, not NFC", goals, undefined).verdict).toBe("follow-up")
    expect(judge("the hash is computed before we normalize", goals, "hash normalize password").verdict).toBe("on-goal")
    expect(judge("ok switching gears, plan a team offsite in lisbon", goals, "hash normalize password").verdict).toBe("off-goal")
    // Off-goal, a prompt that goes on with the other work stays off-goal even if a word of it is the goal's.
    expect(judge("add the lisbon offsite hotel for the auth team", goals, "hash", "lisbon offsite").verdict).toBe("off-goal")
  })

  it("keeps what it needs small: bounded context, thread and evidence", () => {
    const many = Array.from({ length: 80 }, (_, i) => read(`src/auth/module${i}/file${i}.ts`))
    const offs = Array.from({ length: 10 }, (_, i) => prompt(`tell me about the history of the city number ${i} and its harbour${i} lighthouse${i}`))
    const { state, results } = foldAll([login, prompt("why does the sign-in fail for unicode passwords"), ...many, ...offs])
    const drift = driftStateOf(state, "live")
    const streak = sessionStreakOf(state, "live", results[1]!.sessionId!)
    expect(drift.context!.split(" ").length).toBe(contextSize)
    expect(streak.thread!.split(" ").length).toBeLessThanOrEqual(threadSize)
    expect(streak.off).toHaveLength(3)
    expect(streak.streak).toBe(10)
    expect(JSON.stringify(drift).length).toBeLessThan(1200)
  })
})

describe("a thin goal: one that names no task in words, only a kind of work, a ticket or a link", () => {
  const thin = (description: string) => isThin([{ id: "g", description }])
  it("is one of only such words; a goal naming what the work is on is not", () => {
    const thinOnes = ["Fix bugs", "Refactor", "Write docs", "Tech debt", "Improve performance", "misc fixes", "Code review", "PROJ-1234", "Work on ABC-982",
      "https://github.com/acme/shop/issues/412", "Fix #412"]
    expect(thinOnes.filter(thin)).toEqual(thinOnes)
    expect(["Fix the login bug", "Add dark mode", "Refactor billing", "Speed up the CI pipeline", "Write the migration guide", "PROJ-1234: fix the login bug"]
      .filter(thin)).toEqual([])
  })
})

describe("the kind of work a thin goal names, and the prompts that show it", () => {
  const shows = (goal: string, prompt: string) => showsKind(prompt, [{ description: goal }])
  it("takes work of the goal's kind for it, and neither other kinds of work nor a ticket's", () => {
    expect([
      shows("Fix bugs", "the csv export crashes with a null pointer exception"),
      shows("Fix bugs", "checkout is broken for guests since yesterday"),
      shows("Write docs", "explain the retry settings in the README"),
      shows("Upgrades", "bump react-router to v7 and fix the deprecations"),
      shows("Tech debt", "extract the pricing rules into their own module"),
      shows("New features", "implement saved searches on the orders page")
    ]).toEqual([true, true, true, true, true, true])
    expect([
      shows("Fix bugs", "write a blog post about our hiring process"),
      shows("Write docs", "the csv export crashes with a null pointer exception"),
      shows("PROJ-1234", "the csv export crashes with a null pointer exception"),
      shows("Fix bugs", "plan a weekend in lisbon for two")
    ]).toEqual([false, false, false, false])
    // A goal of any work takes every kind, and no everyday request shows any kind.
    expect(["the csv export crashes on empty rows", "explain the retry settings in the README", "extract the pricing rules into a module"]
      .map((p) => shows("Sprint tasks", p))).toEqual([true, true, true])
    const everyday = ["write a haiku about autumn", "create a shopping list for the weekend", "what is the capital of peru", "recommend some jazz records",
      "write a toast for my sister's wedding, funny but kind", "translate this email to french", "give me a recipe for banana bread"]
    const goals = ["Fix bugs", "New features", "Write docs", "Upgrades", "Refactor", "Infra work", "Performance", "Security", "Sprint tasks", "Backlog"]
    expect(goals.flatMap((g) => everyday.filter((p) => shows(g, p)))).toEqual([])
  })
})

describe("the language of a prompt, as goal drift needs it", () => {
  it("tells German, Spanish and other scripts from English, and takes no English corpus text for another language", () => {
    expect(
      ["schreib einen Test mit einem Emoji-Passwort", "lass die Tests nochmal laufen", "¿por qué falla el inicio de sesión con contraseñas unicode?",
        "为什么登录接口在密码包含unicode字符时返回500", "почему логин возвращает 500", "Fix the login bug", "pytest -x"].map(languageOf)
    )
      .toEqual(["de", "de", "es", "other-script", "other-script", "en", undefined])
    const texts = [...development, ...held, ...wide, ...fresh, ...freshTwo]
      .flatMap((g) => [g.goal, ...g.work.filter(isPrompt), ...g.off, ...g.drift.filter(isPrompt)])
    expect(texts.length).toBeGreaterThan(1600)
    expect(texts.filter((t) => ![undefined, "en"].includes(languageOf(t)))).toEqual([])
  })
})
