import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { RuleCache } from "../../src/engine/rule-cache.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import { Channels } from "../../src/store/channels-repo.ts"
import { Rules } from "../../src/store/rules-repo.ts"
import { Webhooks } from "../../src/store/webhooks-repo.ts"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

describe("RuleCache", () => {
  it("sees rule changes and the shared scopes budgets watch within about a second, in evaluation order, per tenant", async () => {
    const databaseUrl = await freshDatabase()
    const org = await bootstrapOrg(databaseUrl, "cache", "team")
    const live = { orgId: org.org_id, environment: "live" as const }
    const mk = (name: string, priority: number, scope: "org" | "team" = "org", enabled = true) =>
      withStore(
        databaseUrl,
        Rules.use((rules) =>
          rules.create(live, {
            name,
            type: "model_filter",
            enabled,
            scope,
            scope_id: scope === "org" ? org.org_id : org.team_id,
            priority,
            condition: { model: { in: ["o3"] } },
            action: "log",
            action_config: {}
          })
        )
      )

    await Effect.runPromise(Effect.scoped(
      Effect.gen(function*() {
        const cache = yield* RuleCache
        expect(cache.rulesFor(org.org_id, "live")).toEqual([])
        const low = yield* Effect.promise(() => mk("low", 50))
        const high = yield* Effect.promise(() => mk("high", 5, "team"))
        yield* Effect.promise(() => mk("off", 1, "org", false))
        const seen = yield* Effect.promise(() =>
          waitFor(async () => cache.rulesFor(org.org_id, "live").map((r) => r.name), (names) => names.length === 2, { timeoutMs: 5_000 })
        )
        expect(seen).toEqual(["high", "low"])
        expect(cache.rulesFor(org.org_id, "test")).toEqual([])
        expect(cache.watched(org.org_id, "live", "team", org.team_id)).toBe(false)
        yield* Effect.promise(() =>
          withStore(
            databaseUrl,
            Rules.use((rules) =>
              rules.create(live, {
                name: "team budget",
                type: "budget",
                enabled: true,
                scope: "team",
                scope_id: org.team_id,
                priority: 100,
                condition: { window: "daily", metric: "cost_usd", threshold: 10 },
                action: "warn",
                action_config: {}
              })
            )
          )
        )
        yield* cache.refresh
        expect(cache.watched(org.org_id, "live", "team", org.team_id)).toBe(true)
        expect(cache.watched(org.org_id, "test", "team", org.team_id)).toBe(false)
        expect([low.id, high.id]).toContain(cache.rulesFor(org.org_id, "live")[0]!.id)
      }).pipe(Effect.provide(RuleCache.layer.pipe(Layer.provide(databaseFromUrl(databaseUrl)))))
    ))
  })

  it("holds each tenant's outbox targets, and a change of them moves the rules version on", async () => {
    const databaseUrl = await freshDatabase()
    const org = await bootstrapOrg(databaseUrl, "targets", "team")
    const live = { orgId: org.org_id, environment: "live" as const }
    const store = <A>(effect: Effect.Effect<A, unknown, Webhooks | Channels>) => withStore(databaseUrl, effect, { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" })

    await Effect.runPromise(Effect.scoped(
      Effect.gen(function*() {
        const cache = yield* RuleCache
        expect(cache.targetsOf(org.org_id, "live")).toEqual({ webhooks: [], channels: new Set(), alertChannels: [] })
        const before = cache.version()
        const { hook, channel } = yield* Effect.promise(() =>
          store(Effect.gen(function*() {
            const hook = yield* Webhooks.use((w) => w.create(live, { url: "http://127.0.0.1:9/hook", events: ["budget.warning"], secret: "s".repeat(32) }))
            const channel = yield* Channels.use((c) => c.create(live, { name: "ops", kind: "discord", url: "http://127.0.0.1:9/room" }))
            yield* Channels.use((c) => c.setAlertChannels(org.org_id, [channel.id]))
            return { hook, channel }
          }))
        )
        const seen = yield* Effect.promise(() =>
          waitFor(async () => cache.targetsOf(org.org_id, "live"), (t) => t.alertChannels.length === 1, { timeoutMs: 5_000 })
        )
        expect(seen).toEqual({ webhooks: [{ id: hook.id, events: ["budget.warning"] }], channels: new Set([channel.id]), alertChannels: [channel.id] })
        expect(cache.targetsOf(org.org_id, "test").webhooks).toEqual([])
        // Signals accepted from now on carry the new version: whichever node folds them holds these targets first.
        expect(cache.version()).toBeGreaterThanOrEqual(before + 3)

        // A disabled channel is no target, nor an alert channel.
        yield* Effect.promise(() => store(Channels.use((c) => c.update(live, channel.id, { enabled: false }))))
        yield* cache.refresh
        expect(cache.targetsOf(org.org_id, "live")).toEqual({ webhooks: [{ id: hook.id, events: ["budget.warning"] }], channels: new Set(), alertChannels: [] })
      }).pipe(Effect.provide(RuleCache.layer.pipe(Layer.provide(databaseFromUrl(databaseUrl)))))
    ))
  })
})
