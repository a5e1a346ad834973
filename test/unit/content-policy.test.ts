import { describe, expect, it } from "@effect/vitest"
import { signalFacts } from "../../src/domain/judge.ts"
import { evaluate, noUsage, type SignalFacts, statelessBlock } from "../../src/domain/rule-evaluation.ts"
import { decodeCondition, type Rule, semanticProblems } from "../../src/domain/rules.ts"

const policy = (condition: Record<string, unknown>, action: Rule["action"] = "block"): Rule => ({
  id: "rule_1",
  name: "no secrets",
  type: "org_policy",
  enabled: true,
  scope: "org",
  scope_id: "org_1",
  priority: 100,
  condition: condition as Rule["condition"],
  action,
  action_config: { message: "a secret must not reach the model" },
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z"
})

const facts = (over: Partial<SignalFacts> = {}): SignalFacts => ({
  orgId: "org_1",
  userId: "user_1",
  teamIds: [],
  projectId: null,
  model: null,
  modelKnown: false,
  ts: "2026-11-22T10:00:00.000Z",
  usage: noUsage,
  ...over
})

const fired = (rule: Rule, f: SignalFacts) => evaluate([rule], f, () => noUsage).firings.map((x) => x.action)

describe("org_policy secret_kinds and protected_paths", () => {
  it("act on a signal whose findings have a listed kind, any kind with *", () => {
    const aws = facts({ findingKinds: ["aws_access_token"] })
    expect(fired(policy({ secret_kinds: ["aws_access_token", "private_key"] }), aws)).toEqual(["block"])
    expect(fired(policy({ secret_kinds: ["github_pat"] }), aws)).toEqual([])
    expect(fired(policy({ secret_kinds: ["*"] }, "warn"), aws)).toEqual(["warn"])
    expect(fired(policy({ secret_kinds: ["*"] }), facts())).toEqual([])
  })

  it("act on a tool call naming a protected file, and are judged at acceptance like the other lists", () => {
    const rule = policy({ protected_paths: ["**/.env", "~/.ssh/*"] })
    expect(statelessBlock([rule], facts({ paths: ["/srv/app/.env"] }))?.id).toBe("rule_1")
    expect(statelessBlock([rule], facts({ paths: ["~/.ssh/id_ed25519"] }))?.id).toBe("rule_1")
    expect(statelessBlock([rule], facts({ paths: ["/srv/app/.env.example", "~/.ssh/keys/x"] }))).toBeUndefined()
  })

  it("read the kinds and paths from the metadata the adapter sends, skipping what is malformed", () => {
    const f = signalFacts(
      {
        type: "pre-tool",
        cost: { usd: 0, model_known: false },
        metadata: { findings: [{ kind: "github_pat", where: "prompt", fingerprint: "ab" }, { where: "x" }, "junk"], paths: ["~/a/.env", 3] }
      } as never,
      null
    )
    expect({ kinds: f.findingKinds, paths: f.paths }).toEqual({ kinds: ["github_pat"], paths: ["~/a/.env"] })
  })

  it("are validated: kinds as the adapters name them, globs Node can match, the usual bounds", () => {
    const problems = (condition: Record<string, unknown>) => {
      const decoded = decodeCondition("org_policy", condition)
      if ("error" in decoded) return [decoded.error]
      return semanticProblems({ type: "org_policy", condition: decoded.ok, action: "log", action_config: {}, name: "x" })
    }
    expect(problems({ secret_kinds: ["aws_access_token", "*"], protected_paths: ["**/.env"] })).toEqual([])
    expect(problems({ secret_kinds: ["AWS key"] })).toEqual([expect.stringContaining("condition.secret_kinds")])
    expect(problems({ protected_paths: ["**"] })).toEqual([expect.stringContaining("would match every file")])
    expect(problems({ protected_paths: [] })).toEqual([expect.stringContaining("must name at least one entry")])
    expect(problems({ protected_paths: Array.from({ length: 101 }, (_, i) => `**/f${i}`) })).toEqual([expect.stringContaining("at most 100 entries")])
    expect(problems({ secret_kinds: "aws" })[0]).toContain("does not match the org_policy shape")
  })
})
