import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import type { SignalRecord } from "../../src/domain/records.ts"
import type { Rule } from "../../src/domain/rules.ts"
import { Ingress } from "../../src/engine/ingress.ts"
import type { Submitted } from "../../src/engine/ingress-answers.ts"
import { Processor } from "../../src/engine/processor.ts"
import { engineHarness } from "../support/engine-harness.ts"
import { signalAt } from "../support/log-records.ts"

/**
 * The engine in one process (test/support/engine-harness.ts): a signal through the ingress, the
 * log, the processor and the fold to its verdict and its rows, with time in the test's hands.
 */
const t0 = Date.parse("2026-11-02T09:00:00.000Z")

const rule = (id: string, over: Partial<Rule>): Rule => ({
  id,
  name: id,
  type: "budget",
  enabled: true,
  scope: "user",
  scope_id: "user_a",
  priority: 100,
  condition: { window: "daily", metric: "tokens_in", threshold: 1_000 },
  action: "block",
  action_config: { message: `${id} says no` },
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  ...over
})

const prompt = (over: Partial<SignalRecord> & { readonly at: number }) =>
  signalAt({ type: "user-prompt", metadata: { model: "claude-sonnet-4-5", tokens_in: 400, tokens_out: 50 }, ...over })

/** The verdict of an answer, whichever way it was reached. */
const verdictOf = (s: Submitted) => (s._tag === "Pending" ? undefined : s.verdict)

describe("the engine, in process", () => {
  it.effect("answers a signal with its verdict and session, and commits its rows behind it", () => {
    const h = engineHarness()
    return Effect.gen(function*() {
      const ingress = yield* Ingress
      const answer = yield* ingress.submit(prompt({ at: t0 }))
      expect(answer._tag).toBe("Processed")
      const verdict = verdictOf(answer)!
      expect(verdict).toMatchObject({ ok: true })
      yield* (yield* Processor).settled
      const session = h.store.sessions.get(verdict.session_id!)
      expect(session).toMatchObject({ user_id: "user_a", tokens_in: 400, tokens_out: 50, signal_count: 1, primary_model: "claude-sonnet-4-5" })
      expect([...h.store.events.values()].map((e) => e.signal_id)).toEqual([verdict.signal_id])
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("blocks a filtered model at acceptance, and the actor records the same block", () => {
    const h = engineHarness({
      rules: [rule("rule_models", { type: "model_filter", scope: "org", scope_id: "org_1", condition: { model: { in: ["claude-sonnet-4-5"] } } })]
    })
    return Effect.gen(function*() {
      const answer = yield* (yield* Ingress).submit(prompt({ at: t0 }))
      expect(verdictOf(answer)).toMatchObject({ ok: false, action: "block", rule_id: "rule_models", message: "rule_models says no" })
      yield* (yield* Processor).settled
      const triggered = [...h.store.notices.values()].filter((n) => n.type === "rule.triggered").map((n) => n.payload.data)
      expect(triggered).toEqual([expect.objectContaining({ rule_id: "rule_models", action: "block" })])
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("lets the signal that crosses a user's budget through and blocks the next, with the rule's message", () => {
    const h = engineHarness({ rules: [rule("rule_budget", {})] })
    return Effect.gen(function*() {
      const ingress = yield* Ingress
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(verdictOf(yield* ingress.submit(prompt({ at: t0 + i * 1000 }))))
      // 400, 800, 1,200 tokens in: the third crosses 1,000 and is let through; the fourth is not.
      expect(answers.map((v) => v?.ok)).toEqual([true, true, true, false])
      expect(answers[3]).toMatchObject({ action: "block", rule_id: "rule_budget", message: "rule_budget says no" })
      // Another user's budget is their own.
      const other = verdictOf(yield* ingress.submit(prompt({ at: t0 + 5000, user_id: "user_b" })))
      expect(other?.ok).toBe(true)
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("answers copies of a keyed signal sent together once as the original, the others as duplicates", () => {
    const h = engineHarness()
    return Effect.gen(function*() {
      const ingress = yield* Ingress
      const copy = prompt({ at: t0, idempotency_key: "key-1" })
      const answers = yield* Effect.forEach([copy, copy, copy], (r) => ingress.submit(r), { concurrency: "unbounded" })
      const verdicts = answers.map((a) => verdictOf(a)!)
      expect(verdicts.filter((v) => v.duplicate !== true)).toHaveLength(1)
      expect(new Set(verdicts.map((v) => v.session_id)).size).toBe(1)
      yield* (yield* Processor).settled
      const session = h.store.sessions.get(verdicts[0]!.session_id!)
      // Counted once.
      expect(session).toMatchObject({ tokens_in: 400, signal_count: 1 })
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("says a refused append was not written, and keeps the block judged at acceptance", () => {
    const h = engineHarness({
      rules: [rule("rule_models", { type: "model_filter", scope: "org", scope_id: "org_1", condition: { model: { in: ["claude-sonnet-4-5"] } } })]
    })
    return Effect.gen(function*() {
      const ingress = yield* Ingress
      h.refuseAppends(1)
      const refused = yield* Effect.flip(ingress.submitMany([prompt({ at: t0 }), prompt({ at: t0, metadata: { model: "claude-haiku-4-5" } })]))
      expect(refused.notWritten).toBe(true)
      expect(refused.judged.map((j) => j?.rule_id)).toEqual(["rule_models", undefined])
      expect(h.appended).toEqual([])
      // The log is back: the next signal goes through as usual.
      expect(verdictOf(yield* ingress.submit(prompt({ at: t0, metadata: { model: "claude-haiku-4-5" } })))?.ok).toBe(true)
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("ends a session after its inactivity timeout, and the user's next signal opens another", () => {
    const h = engineHarness()
    return Effect.gen(function*() {
      const ingress = yield* Ingress
      const first = verdictOf(yield* ingress.submit(prompt({ at: t0, session_timeout_s: 60 })))!
      // The timers are swept every second: 60 s of silence, and a tick ends the session.
      yield* TestClock.adjust("62 seconds")
      yield* Effect.yieldNow
      const tick = h.appended.find((r) => r.kind === "session-timeout")
      expect(tick).toMatchObject({ kind: "session-timeout", user_id: "user_a", session_id: first.session_id })
      yield* (yield* Processor).settled
      expect(h.store.sessions.get(first.session_id!)).toMatchObject({ end_reason: "timeout" })
      const next = verdictOf(yield* ingress.submit(prompt({ at: t0 + 62_000, session_timeout_s: 60 })))!
      expect(next.session_id).not.toBe(first.session_id)
      // The clock is set before the engine starts: a jump of years would run its every-25-ms sweeper all the way.
    }).pipe(Effect.provide(h.layer), (test) => Effect.andThen(TestClock.setTime(t0), test))
  })

  it.effect("waits for a goal command's outcome from the user's actor", () => {
    const h = engineHarness()
    return Effect.gen(function*() {
      const ingress = yield* Ingress
      const outcome = yield* ingress.submitGoal({
        v: 1,
        kind: "goal",
        org_id: "org_1",
        environment: "live",
        user_id: "user_a",
        ts: new Date(t0).toISOString(),
        command_id: "gcmd_1",
        op: "create",
        goal_id: "goal_1",
        description: "Fix the login bug",
        adapter: "claude-code"
      })
      expect(Option.isSome(outcome)).toBe(true)
      yield* (yield* Processor).settled
      expect(h.store.goals.get("goal_1")).toMatchObject({ description: "Fix the login bug", status: "active" })
    }).pipe(Effect.provide(h.layer))
  })

  it.effect("reports each owned partition: where it is and what it holds", () => {
    const h = engineHarness({ partitions: 2 })
    return Effect.gen(function*() {
      const fiber = yield* Effect.forkChild((yield* Ingress).submit(prompt({ at: t0 })))
      yield* Fiber.join(fiber)
      const partitions = yield* (yield* Processor).partitions
      expect(partitions.map((p) => p.partition)).toEqual([0, 1])
      expect(partitions.reduce((n, p) => n + p.next_offset, 0)).toBe(1)
      expect(partitions.reduce((n, p) => n + p.actors, 0)).toBe(1)
    }).pipe(Effect.provide(h.layer))
  })
})
