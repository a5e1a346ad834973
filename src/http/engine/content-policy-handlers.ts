import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Rule } from "../../domain/rules.ts"
import { RuleCache } from "../../engine/rule-cache.ts"
import { EnginePrincipal } from "../contract.ts"
import { EngineApi } from "./api.ts"

/** The custom patterns of the enabled org policies, each kind and pattern once (the rules judge scope on the findings). */
export const customPatternsOf = (rules: ReadonlyArray<Rule>) => {
  const seen = new Map<string, { readonly kind: string; readonly pattern: string }>()
  for (const rule of rules) {
    if (!rule.enabled || rule.type !== "org_policy") continue
    const patterns = (rule.condition as { readonly custom_patterns?: ReadonlyArray<{ readonly kind: string; readonly pattern: string }> })
      .custom_patterns ?? []
    for (const p of patterns) seen.set(`${p.kind}\0${p.pattern}`, { kind: p.kind, pattern: p.pattern })
  }
  return [...seen.values()]
}

export const ContentPolicyHandlers = HttpApiBuilder.group(EngineApi, "contentPolicy", (handlers) =>
  Effect.gen(function*() {
    const rules = yield* RuleCache
    return handlers.handle("contentPolicy", () =>
      EnginePrincipal.use((p) => Effect.succeed({ custom_patterns: customPatternsOf(rules.rulesFor(p.orgId, p.environment)) })))
  }))
