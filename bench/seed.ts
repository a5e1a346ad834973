/**
 * What the scenarios run against: users, license keys and rules written straight into the
 * tables (one statement each), not through the management API: 100,000 users over HTTP would
 * take minutes and measure the management API. The rows are what the API would write.
 */
import { createHash, randomBytes } from "node:crypto"
import { setTimeout as sleep } from "node:timers/promises"
import { Effect } from "effect"
import { withDb } from "./database.ts"

export interface Tenant {
  readonly orgId: string
  readonly userIds: ReadonlyArray<string>
  readonly keys: ReadonlyArray<string>
}

/** A team-plan org, its users, SHA-256-hashed `lic_` keys. */
export const seedUsers = async (url: string, count: number, name = "bench"): Promise<Tenant> => {
  const orgId = `org_${name}${randomBytes(4).toString("hex")}`
  const userIds = Array.from({ length: count }, (_, i) => `user_${name}_${i}`)
  const keys = userIds.map(() => `lic_${randomBytes(10).toString("hex")}`)
  const hashes = keys.map((k) => createHash("sha256").update(k).digest("hex"))
  const keyIds = keys.map((_, i) => `lk_${name}_${i}`)
  await withDb(url, (sql) =>
    Effect.gen(function*() {
      yield* sql`INSERT INTO orgs (id, name, plan) VALUES (${orgId}, ${name}, 'team')`
      yield* sql`INSERT INTO users (id, org_id, email, name, role)
        SELECT id, ${orgId}, id || '@bench.test', id, 'member' FROM unnest(${userIds}::text[]) AS id`
      yield* sql`INSERT INTO license_keys (id, org_id, user_id, environment, key_hash, key_hint)
        SELECT k.id, ${orgId}, k.user_id, 'test', k.hash, 'lic_…' FROM unnest(${keyIds}::text[], ${userIds}::text[], ${hashes}::text[])
          AS k(id, user_id, hash)`
    }))
  return { orgId, userIds, keys }
}

export const ruleCount = 50

/** Waits until the service blocks the model the first seeded rule names (a signal not measured). */
export const rulesInForce = async (port: number, key: string) => {
  for (let tries = 0; tries < 200; tries++) {
    const res = await fetch(`http://127.0.0.1:${port}/engine/v1/signals`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "post-tool", adapter: "bench", session_id: "rules-probe", metadata: { model: "unused-model-0" } })
    })
    if (((await res.json()) as { ok?: boolean }).ok === false) return
    await sleep(25)
  }
  throw new Error("the seeded rules never came into force")
}

/**
 * Enabled rules that every bench signal is evaluated against and none blocks: model filters on
 * models nobody uses, org budgets and per-user limits far above what a run spends (their
 * counters are read for every signal, org budgets from the shared scope counts), org policies
 * for unknown models. What it measures is the price of evaluation, not of acting.
 */
export const seedRules = (url: string, orgId: string) =>
  withDb(url, (sql) =>
    Effect.gen(function*() {
      const rules = Array.from({ length: ruleCount }, (_, i) => {
        const kind = i % 5
        const [type, condition, action] = kind === 0
          ? ["model_filter", { model: { in: [`unused-model-${i}`] } }, "block"]
          : kind === 1
          ? ["budget", { window: i % 2 ? "daily" : "monthly", metric: "cost_usd", threshold: 1e9 }, "warn"]
          : kind === 2
          ? ["budget", { window: "daily", metric: "tokens_total", threshold: 1e15 }, "notify"]
          : kind === 3
          ? ["user_limit", { window: "monthly", metric: "tokens_total", per_user: 1e15 }, "warn"]
          : ["org_policy", { block_unknown_models: true }, "log"]
        return {
          id: `rule_bench_${i}`,
          org_id: orgId,
          name: `bench ${i}`,
          type,
          scope: "org",
          scope_id: orgId,
          priority: i,
          condition: JSON.stringify(condition),
          action,
          action_config: JSON.stringify(action === "block" ? { message: "no" } : {})
        }
      })
      yield* sql`
        INSERT INTO rules (id, org_id, environment, name, type, scope, scope_id, priority, condition, action, action_config)
        SELECT id, org_id, 'test', name, type, scope, scope_id, priority, condition::jsonb, action, action_config::jsonb
        FROM jsonb_to_recordset(${JSON.stringify(rules)}::jsonb) AS r(id text, org_id text, name text, type text,
          scope text, scope_id text, priority integer, condition text, action text, action_config text)`
    }))
