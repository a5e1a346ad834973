import { describe, expect, it } from "@effect/vitest"
import { scanCustom } from "../../adapters/src/secrets/custom-patterns.js"
import { scanHookInput } from "../../adapters/src/secrets/hook-input.js"
import { patternProblem } from "../../src/domain/content-policy.ts"
import { evaluate, noUsage } from "../../src/domain/rule-evaluation.ts"
import { decodeCondition, type Rule, semanticProblems } from "../../src/domain/rules.ts"

const problems = (condition: Record<string, unknown>) => {
  const decoded = decodeCondition("org_policy", condition)
  if ("error" in decoded) return [decoded.error]
  return semanticProblems({ type: "org_policy", condition: decoded.ok, action: "block", action_config: { message: "m" }, name: "x" })
}

describe("an org's custom patterns", () => {
  it("are refused at creation when RE2 cannot take them, they are large, or they match the empty string", () => {
    expect(problems({ custom_patterns: [{ kind: "acme_token", pattern: "acme_[a-z0-9]{24}" }] })).toEqual([])
    expect(patternProblem("(a)\\1")).toContain("invalid escape sequence")
    expect(patternProblem("(?=secret)")).toContain("unsupported Perl syntax")
    expect(patternProblem("((a{100}){100}){100}")).toContain("invalid repeat count")
    expect(patternProblem("x*")).toContain("empty string")
    expect(patternProblem("(abc|def){500}")).toContain("program is over")
    // Catastrophic for a backtracking engine, linear for RE2: taken.
    expect(patternProblem("(a+)+$")).toBeUndefined()
    expect(problems({ custom_patterns: [{ kind: "Acme", pattern: "(?<=x)y" }] })).toEqual([
      "condition.custom_patterns[0].kind: lowercase letters, digits and _",
      expect.stringContaining("condition.custom_patterns[0].pattern: refused: ")
    ])
    expect(problems({ custom_patterns: Array.from({ length: 21 }, (_, i) => ({ kind: `k${i}`, pattern: `k${i}_[0-9]{8}` })) }))
      .toEqual(["condition.custom_patterns: at most 20 patterns"])
    expect(problems({ custom_patterns: [{ kind: "k", pattern: "x".repeat(201) }] })).toEqual(["condition.custom_patterns[0].pattern: 1 to 200 characters"])
  })

  it("are matched by the adapter as findings of their kind, in linear time on a text built to make backtracking blow up", () => {
    const patterns = [{ kind: "acme_token", pattern: "acme_[a-z0-9]{24}" }, { kind: "evil", pattern: "(a+)+$" }]
    const { found } = scanHookInput({ prompt: "use acme_0123456789abcdefghijklmn for the build" }, patterns)
    expect(found).toEqual([{ kind: "acme_token", where: "prompt", secret: "acme_0123456789abcdefghijklmn" }])
    expect(scanCustom(`${"a".repeat(50_000)}!`, patterns)).toEqual([])
  })

  it("make a rule act on their kind", () => {
    const rule = {
      id: "rule_1",
      name: "acme",
      type: "org_policy",
      enabled: true,
      scope: "org",
      scope_id: "org_1",
      priority: 1,
      condition: { custom_patterns: [{ kind: "acme_token", pattern: "acme_[a-z0-9]{24}" }] },
      action: "block",
      action_config: { message: "m" },
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z"
    } as Rule
    const facts = (findingKinds: ReadonlyArray<string>) => ({
      orgId: "org_1",
      userId: "u",
      teamIds: [],
      projectId: null,
      model: null,
      modelKnown: false,
      ts: "2026-11-22T10:00:00.000Z",
      usage: noUsage,
      findingKinds
    })
    expect(evaluate([rule], facts(["acme_token"]), () => noUsage).ok).toBe(false)
    expect(evaluate([rule], facts(["github_pat"]), () => noUsage).ok).toBe(true)
  })
})
