import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { RuleCache } from "../../src/engine/rule-cache.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import { Rules } from "../../src/store/rules-repo.ts"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

describe("RuleCache", () => {
  it("sees rule changes and the shared scopes budgets watch within about a second, in evaluation order, per tenant", async () => {
    const databaseUrl = await freshDatabase()
    const org = await bootstrapOrg(databaseUrl, "cache", "team")
    const live = { orgId: org.org_id, environment: "live" as const }
    const mk = (name: string, priority: number, scope: "org" | "team" = "org", enabled = true) =>
      withStore(databaseUrl, Rules.use((rules) => rules.create(live, {
        name, type: "model_filter", enabled, scope, scope_id: scope === "org" ? org.org_id : org.team_id, priority,
        condition: { model: { in: ["o3"] } }, action: "log", action_config: {}
      })))

    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const cache = yield* RuleCache
      expect(cache.rulesFor(org.org_id, "live")).toEqual([])
      const low = yield* Effect.promise(() => mk("low", 50))
      const high = yield* Effect.promise(() => mk("high", 5, "team"))
      yield* Effect.promise(() => mk("off", 1, "org", false))
      const seen = yield* Effect.promise(() =>
        waitFor(async () => cache.rulesFor(org.org_id, "live").map((r) => r.name), (names) => names.length === 2, { timeoutMs: 5_000 }))
      expect(seen).toEqual(["high", "low"])
      expect(cache.rulesFor(org.org_id, "test")).toEqual([])
      expect(cache.watched(org.org_id, "live", "team", org.team_id)).toBe(false)
      yield* Effect.promise(() =>
        withStore(databaseUrl, Rules.use((rules) => rules.create(live, {
          name: "team budget", type: "budget", enabled: true, scope: "team", scope_id: org.team_id, priority: 100,
          condition: { window: "daily", metric: "cost_usd", threshold: 10 }, action: "warn", action_config: {}
        }))))
      yield* cache.refresh
      expect(cache.watched(org.org_id, "live", "team", org.team_id)).toBe(true)
      expect(cache.watched(org.org_id, "test", "team", org.team_id)).toBe(false)
      expect([low.id, high.id]).toContain(cache.rulesFor(org.org_id, "live")[0]!.id)
    }).pipe(Effect.provide(RuleCache.layer.pipe(Layer.provide(databaseFromUrl(databaseUrl)))))))
  })
})
