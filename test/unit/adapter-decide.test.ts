import { describe, expect, it } from "vitest"
import { decide } from "../../adapters/src/hook.js"
import type { Settings } from "../../adapters/src/settings.js"

/** How the adapter turns the service's answers into what the tool is told, per fail mode. */
describe("the adapter's decision", () => {
  const settings = (fail_mode: "open" | "closed"): Settings => ({
    url: "https://signals.example.com",
    license_key: "lic_00000000000000000000",
    fail_mode,
    send_prompts: false,
    timeout_ms: 3000,
    project_id: undefined
  })
  const answered = (...results: Array<Record<string, unknown>>) => ({ kind: "answered" as const, results: results as any })

  it("a pending answer follows the fail mode and says why", () => {
    const pending = answered({ ok: true, signal_id: "sig_1", action: "pending", reason: "no_owner" })
    expect(decide(pending, settings("open"))).toEqual({
      kind: "warn",
      message: "signal-engine has no verdict yet (pending: no_owner); allowed because the adapter fails open"
    })
    expect(decide(pending, settings("closed"))).toEqual({
      kind: "block",
      message: "signal-engine has no verdict yet (pending: no_owner); blocked because the adapter fails closed"
    })
  })

  it("a block anywhere in the event's signals wins, with the rule's message; then a warning", () => {
    const verdicts = answered(
      { ok: true, signal_id: "sig_1", action: "warn", message: "careful" },
      { ok: false, signal_id: "sig_2", action: "block", message: "not allowed", rule_id: "rule_1" }
    )
    expect(decide(verdicts, settings("open"))).toEqual({ kind: "block", message: "not allowed" })
    expect(decide(answered({ ok: true, signal_id: "sig_1", action: "warn", message: "careful" }), settings("closed")))
      .toEqual({ kind: "warn", message: "careful" })
    expect(decide(answered({ ok: true, signal_id: "sig_1", action: "log" }), settings("closed"))).toEqual({ kind: "allow" })
  })

  it("no answer or a refusal follows the fail mode", () => {
    expect(decide({ kind: "unreachable", reason: "ECONNREFUSED" }, settings("closed")).kind).toBe("block")
    expect(decide({ kind: "rejected", status: 401, code: "unauthorized", error: "invalid license key" }, settings("open")))
      .toEqual({ kind: "warn", message: "signal-engine refused the signal: 401 unauthorized: invalid license key; allowed because the adapter fails open" })
  })

  it("a block the service judged before it failed to record the signal is enforced in either fail mode", () => {
    const outcome = {
      kind: "unreachable" as const,
      reason: "HTTP 503 log_unavailable",
      blocked: { ok: false, action: "block", rule_id: "rule_1", message: "o3 is not allowed" }
    }
    expect(decide(outcome, settings("open"))).toEqual({ kind: "block", message: "o3 is not allowed" })
    expect(decide({ ...outcome, blocked: { ok: false, action: "block", rule_id: "rule_1" } }, settings("open")))
      .toEqual({ kind: "block", message: "Blocked by signal-engine policy (rule_1)" })
  })

  it("a goal drift in the answers is shown as a warning, beside a rule's; a block still wins", () => {
    const since = new Date(2026, 10, 29, 9, 5).toISOString()
    const drift = { goal_id: "goal_1", goal: "Fix the login bug", since, off_goal_prompts: 3 }
    const shown = "goal drift: the last 3 prompts look unrelated to your goal “Fix the login bug” (since 09:05). " +
      "Back to it: signal-engine-adapter goal refocus. It was the goal's work: signal-engine-adapter goal not-drift. " +
      "Moved on: signal-engine-adapter goal set '<what you work on now>'"
    expect(decide(answered({ ok: true, signal_id: "sig_1", drift }), settings("open"))).toEqual({ kind: "warn", message: shown })
    expect(decide(answered({ ok: true, signal_id: "sig_1", action: "warn", message: "careful", drift }), settings("open")))
      .toEqual({ kind: "warn", message: `careful\n${shown}` })
    expect(decide(answered({ ok: true, signal_id: "sig_1", drift }, { ok: false, signal_id: "sig_2", action: "block", message: "no" }), settings("open")))
      .toEqual({ kind: "block", message: "no" })
  })
})
