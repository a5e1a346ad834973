import { describe, expect, it } from "@effect/vitest"
import { type DriftMethod, driftMethod } from "../../src/domain/drift.ts"
import type { FoldResult } from "../../src/domain/fold-result.ts"
import type { LogRecord, SignalRecord } from "../../src/domain/records.ts"
import { fold } from "../../src/domain/user-fold.ts"
import { emptyUserState } from "../../src/domain/user-state.ts"
import { goalAt, signalAt } from "../support/log-records.ts"

/**
 * Answering a goal drift: a `refocus-ack` starts the session's streak over (the user is back on
 * the goal); with `on_goal: true` the user says the drift was wrong, that the prompts were the
 * goal's work, and their words join the context, so the same work is not called off again; the
 * prompts the answer names (`prompts`, the drift's evidence) join it even once the session is back
 * on the goal.
 */
let seq = 0
const at = (second: number) => new Date(Date.parse("2026-11-22T10:00:00.000Z") + second * 1000).toISOString()
const signal = (type: SignalRecord["type"], metadata: Record<string, unknown> = {}, method: DriftMethod = driftMethod) =>
  signalAt({
    at: Date.parse(at(++seq)),
    signal_id: `sig_${seq}`,
    type,
    client_session_id: "A",
    metadata: { cwd: "/home/dev/auth-service", ...metadata },
    drift_method: method
  })
const prompt = (text: string, method?: DriftMethod) => signal("user-prompt", { prompt: text }, method)
const goal = goalAt({ op: "create", ts: at(0), description: "Add two-factor authentication to the admin console" })
// The goal's work in words the goal does not have: a detector of words cannot know it is the goal's.
const work = ["generate a secret and return an otpauth:// url for the qr code", "store the secret encrypted with the existing kms helper",
  "10 recovery codes, hashed, shown once"]
const more = ["render the qr code on the settings page", "recovery codes should be single use", "rotate the kms key of the stored secrets",
  "show the otpauth url again until the first code is confirmed"]

const foldAll = (records: ReadonlyArray<LogRecord>) => {
  let state = emptyUserState
  const results: Array<FoldResult> = []
  for (const [offset, record] of records.entries()) {
    const result = fold(state, record, { partition: 0, offset })
    state = result.state
    results.push(result)
  }
  return results
}

describe("answering a goal drift", () => {
  const afterAnswer = (answer: Record<string, unknown> | undefined, method: DriftMethod = driftMethod) => {
    const results = foldAll([
      { ...goal, drift_method: method },
      ...work.map((p) => prompt(p, method)),
      ...(answer ? [signal("refocus-ack", answer, method)] : []),
      ...more.map((p) => prompt(p, method))
    ])
    return { drifts: results.filter((r) => r.drift).length, judged: results.slice(-more.length).map((r) => r.judged) }
  }

  it("takes the prompts of a drift answered as the goal's work for the goal's words from then on", () => {
    expect(afterAnswer({ on_goal: true })).toEqual({ drifts: 1, judged: ["on-goal", "on-goal", "on-goal", "on-goal"] })
  })

  it("starts the streak over on a plain refocus-ack, and learns nothing from it", () => {
    const plain = afterAnswer({})
    expect(plain.drifts).toBe(2)
    expect(plain.judged.filter((j) => j === "off-goal").length).toBeGreaterThanOrEqual(3)
    // Unanswered, the streak goes on: the drift is reported once.
    expect(afterAnswer(undefined).drifts).toBe(1)
  })

  it("learns nothing from on_goal on records stamped before context-4, so their replay derives what it did", () => {
    expect(afterAnswer({ on_goal: true }, "context-3").drifts).toBe(2)
  })

  /** The answer comes after the session is back on the goal's own words, naming the drift's prompts as the adapter was told them. */
  const answeredLate = (method: DriftMethod, named: boolean) => {
    const before = foldAll([{ ...goal, drift_method: method }, ...work.map((p) => prompt(p, method))])
    const told = before.find((r) => r.drift)?.drift?.evidence.map((e) => e.prompt) ?? []
    const results = foldAll([
      { ...goal, drift_method: method },
      ...work.map((p) => prompt(p, method)),
      prompt("the admin console login asks for the two-factor authentication code now", method),
      signal("refocus-ack", { on_goal: true, ...(named ? { prompts: told } : {}) }, method),
      ...more.map((p) => prompt(p, method))
    ])
    return {
      told: told.length,
      back: results[work.length + 1]!.judged,
      drifts: results.filter((r) => r.drift).length,
      judged: results.slice(-more.length).map((r) => r.judged)
    }
  }

  it("takes the words of the prompts a late answer names, though the session is back on the goal by then", () => {
    expect(answeredLate(driftMethod, true)).toEqual({ told: 3, back: "on-goal", drifts: 1, judged: ["on-goal", "on-goal", "on-goal", "on-goal"] })
    // Without the prompts named, the session's other work is gone by then: the same work drifts again.
    expect(answeredLate(driftMethod, false).drifts).toBe(2)
  })

  it("learns nothing from the prompts an answer names on records stamped before context-5", () => {
    expect(answeredLate("context-4", true).drifts).toBe(2)
  })
})
