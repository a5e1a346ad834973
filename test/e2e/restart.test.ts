import type { ChildProcess } from "node:child_process"
import { describe, expect, it } from "vitest"
import { partitionForKey } from "../../src/log/murmur2.ts"
import { owners, sharedOwners, usersWithKeys } from "../support/cluster.ts"
import { blockO3 } from "../support/block-rule.ts"
import { bootstrapOrg, call, freshDatabase, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { exited, serveProcess } from "../support/served.ts"
import { waitFor } from "../support/wait.ts"

interface Readiness {
  readonly at: number
  readonly status: number
  readonly owned?: ReadonlyArray<number>
  readonly error?: string
}

const readiness = async (base: string): Promise<Readiness> => {
  const at = Date.now()
  try {
    const res = await fetch(`${base}/readyz`)
    const body: any = await res.json()
    return { at, status: res.status, owned: body.checks?.partitions?.owned, error: body.error }
  } catch {
    return { at, status: 0 }
  }
}

describe.each(logVariants())("a restart over %s", (_name, logEnv) => {
  it("never answers ok for a model an org model_filter blocks, before, while or after a kill -9 and restart", { timeout: 150_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const env = { ...logEnv(), DATABASE_URL: databaseUrl, PORT: String(await freePort()), HOST: "127.0.0.1", DEMO_BOOTSTRAP: "false" }
    const base = `http://127.0.0.1:${env.PORT}`
    let child = serveProcess(env)
    await waitFor(() => readiness(base), (r) => r.status === 200, { timeoutMs: 60_000, what: "the server to be ready" })
    const org = await bootstrapOrg(databaseUrl, "restart", "team")
    const created = await fetch(`${base}/api/v1/rules`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.api_key_live}`, "content-type": "application/json" },
      body: JSON.stringify({
        scope: "org",
        scope_id: org.org_id,
        name: "No o3",
        type: "model_filter",
        action: "block",
        action_config: { message: "o3 is not allowed" },
        condition: { model: { in: ["o3"] } }
      })
    })
    expect(created.status).toBe(201)

    const send = async (model: string) => {
      const res = await fetch(`${base}/engine/v1/signals`, {
        method: "POST",
        headers: { authorization: `Bearer ${org.license_key}`, "content-type": "application/json" },
        body: JSON.stringify({ type: "post-tool", adapter: "claude-code", session_id: "s1", metadata: { model, tokens_in: 10, tokens_out: 5 } })
      })
      return { status: res.status, body: (await res.json()) as any }
    }
    await waitFor(() => send("o3"), (r) => r.body.ok === false, { what: "the rule to be in force" })

    type Phase = "before" | "while" | "after"
    let phase: Phase = "before"
    const seen = { before: { blocked: 0, allowedBlocked: 0 }, while: { blocked: 0, allowedBlocked: 0 }, after: { blocked: 0, allowedBlocked: 0 } }
    const pending: Array<any> = []
    let stop = false
    const lane = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const model = (n + i) % 2 === 0 ? "o3" : "gpt-4o"
        const at = phase
        const answer = await send(model).catch(() => undefined)
        if (answer === undefined) {
          await new Promise((r) => setTimeout(r, 20)) // the server is down: try again shortly
          continue
        }
        if (answer.status !== 200) continue
        if (answer.body.action === "pending") pending.push(answer.body)
        if (model === "o3") {
          if (answer.body.ok === true) seen[at].allowedBlocked++
          else seen[at].blocked++
        }
      }
    }
    const lanes = Array.from({ length: 8 }, (_, n) => lane(n))
    await waitFor(async () => seen.before.blocked, (n) => n >= 50, { timeoutMs: 30_000, what: "load before the kill" })

    child.kill("SIGKILL")
    await exited(child)
    phase = "while"
    const restartedAt = Date.now()
    child = serveProcess(env)
    const samples: Array<Readiness> = []
    try {
      const owning = await waitFor(
        async () => {
          const r = await readiness(base)
          samples.push(r)
          return r
        },
        (r) => r.status === 200,
        { timeoutMs: 90_000, what: "the restarted node to be ready" }
      )
      const listening = samples.find((r) => r.status !== 0)!
      phase = "after"
      await waitFor(async () => seen.after.blocked, (n) => n >= 50, { timeoutMs: 30_000, what: "load after the restart" })
      stop = true
      await Promise.all(lanes)

      console.log(
        `restart over ${_name}: listening ${listening.at - restartedAt} ms after spawn, ready (owning ${owning.owned?.join(",")}) ` +
          `${owning.at - restartedAt} ms after spawn; 503 samples: ${samples.filter((r) => r.status === 503).length}; ` +
          `o3 signals blocked before/while/after: ${seen.before.blocked}/${seen.while.blocked}/${seen.after.blocked}; pending: ${pending.length}`
      )
      // Not one signal of the blocked model was answered ok, whoever owned its partition.
      expect([seen.before.allowedBlocked, seen.while.allowedBlocked, seen.after.allowedBlocked]).toEqual([0, 0, 0])
      // Ready only with partitions: never 200 with owned [] (the window before the node is back).
      for (const r of samples.filter((s) => s.status === 200)) expect(r.owned?.length ?? 0).toBeGreaterThan(0)
      for (const r of samples.filter((s) => s.status === 503)) expect(r.error).toBeTypeOf("string")
      // A pending answer says why, so an adapter can apply its fail mode.
      for (const p of pending) expect(["no_owner", "forward_failed", "timeout"]).toContain(p.reason)
    } finally {
      stop = true
      child.kill("SIGTERM")
      await exited(child)
    }
  })
})

describe.each(logVariants())("answers without a verdict over %s", (_name, logEnv) => {
  it("a signal not judged within the wait is pending with a reason, unless a stateless rule blocks it", async () => {
    // No wait at all: every signal is answered before its actor has judged it.
    const server = await startServer({ env: { ...logEnv(), INGEST_WAIT: "0 millis" } })
    try {
      // Ready means owning a partition, not every one: until it owns the user's, an answer is pending
      // for want of an owner (no_owner), which the restart test covers. This one is about the wait.
      await waitFor(() => owners(server.databaseUrl), (rows) => rows.length === 4, { what: "the node to own every partition" })
      const org = await bootstrapOrg(server.databaseUrl, "no-wait", "team")
      const rule = await blockO3(server, org)
      const signal = (metadata: Record<string, unknown>) =>
        call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: { type: "post-tool", adapter: "claude-code", session_id: "s1", metadata } })
      // Rules are judged by the cache, reloaded on a change: the block is in force once it has loaded.
      const blocked = await waitFor(() => signal({ model: "o3", tokens_in: 10 }), (r) => r.body.ok === false, { what: "the rule to load" })
      expect(blocked.body).toMatchObject({ ok: false, action: "block", rule_id: rule, message: "o3 is not allowed" })
      // Verdicts come once the signal is folded, not committed: a node's own append may be folded
      // before its answer goes out, even with no wait; when it has not, the answer says why.
      const allowed = await signal({ model: "gpt-4o", tokens_in: 10 })
      expect(allowed.body.ok).toBe(true)
      if (allowed.body.action === "pending") {
        expect(allowed.body).toMatchObject({ reason: "timeout" })
        expect(allowed.body.message).toBeTypeOf("string")
      } else expect(allowed.body.session_id).toBeTypeOf("string")
      const batch = await call(server, "POST", "/engine/v1/signals/batch", {
        key: org.license_key,
        body: {
          signals: [{ type: "post-tool", adapter: "claude-code", session_id: "s1", metadata: { model: "o3" } }, {
            type: "post-tool",
            adapter: "claude-code",
            session_id: "s1",
            metadata: { model: "gpt-4o" }
          }]
        }
      })
      expect(batch.body.results[0]).toMatchObject({ ok: false, action: "block", rule_id: rule })
      // The batch's own fold may judge its second signal before its answer goes out (one append,
      // one fold); when it has not, the answer says why.
      const second = batch.body.results[1]
      expect(second.ok).toBe(true)
      if (second.action === "pending") expect(second.reason).toBe("timeout")
      else expect(second.session_id).toBeTypeOf("string")
      // Blocked or not, every signal was appended and is counted once its actor has folded it.
      await waitFor(
        () => call(server, "GET", `/api/v1/events?limit=100`, { key: org.api_key_live! }),
        (r) => r.status === 200 && (r.body.data?.length ?? 0) >= 4,
        { what: "the signals to be folded" }
      )
    } finally {
      await server.stop()
    }
  })
})

describe.each(logVariants())("two nodes, one killed and restarted, over %s", (_name, logEnv) => {
  it("no node answers ok for a model an org model_filter blocks, and pending answers say why", { timeout: 180_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const shared = { ...logEnv(), DATABASE_URL: databaseUrl, HOST: "127.0.0.1", DEMO_BOOTSTRAP: "false", CLUSTER_SECRET: "restart-test-secret" }
    const envA = { ...shared, PORT: String(await freePort()) }
    const envB = { ...shared, PORT: String(await freePort()) }
    const [baseA, baseB] = [`http://127.0.0.1:${envA.PORT}`, `http://127.0.0.1:${envB.PORT}`]
    // Both nodes own partitions (their share) when A is killed.
    let a = serveProcess(envA)
    let b: ChildProcess | undefined
    try {
      await waitFor(() => readiness(baseA), (r) => r.status === 200, { timeoutMs: 60_000, what: "node A to be ready" })
      b = serveProcess(envB)
      await waitFor(() => readiness(baseB), (r) => r.status === 200, { timeoutMs: 60_000, what: "node B to be ready" })
      await sharedOwners(databaseUrl, 4)
      const org = await bootstrapOrg(databaseUrl, "restart-two", "team")
      const users = await usersWithKeys({ baseUrl: baseB } as TestServer, org, 8, "restart.test")
      await blockO3({ baseUrl: baseB }, org)
      // A user over a per-user budget, whose partition A owns: while nobody owns it the budget
      // cannot be judged (pending, saying why); how soon it is enforced again is measured.
      const owned = await owners(databaseUrl)
      const spender = (await usersWithKeys({ baseUrl: baseB } as TestServer, org, 12, "spender.test"))
        .find((u) => owned.find((o) => o.partition === partitionForKey(u.userId, 4))?.url.endsWith(`:${envA.PORT}`))!
      expect(spender, "a user on a partition of node A").toBeDefined()
      const budget = await call({ baseUrl: baseB }, "POST", "/api/v1/rules", {
        key: org.api_key_live!,
        body: {
          scope: "user",
          scope_id: spender.userId,
          name: "Daily tokens",
          type: "budget",
          action: "block",
          action_config: { message: "spent" },
          condition: { window: "daily", metric: "tokens_total", threshold: 100 }
        }
      })
      expect(budget.status).toBe(201)
      const spend = () =>
        fetch(`${baseB}/engine/v1/signals`, {
          method: "POST",
          headers: { authorization: `Bearer ${spender.key}`, "content-type": "application/json" },
          body: JSON.stringify({ type: "post-tool", adapter: "claude-code", session_id: "spent", metadata: { model: "gpt-4o", tokens_in: 60 } })
        }).then(async (r) => ({ at: Date.now(), status: r.status, body: (await r.json()) as any }), () => undefined)
      await waitFor(spend, (r) => r?.body.ok === false && r.body.rule_id === budget.body.id, { what: "the budget to be spent" })

      const tally = { blocked: 0, allowedBlocked: 0, pending: [] as Array<any>, viaRestarted: 0 }
      let restarted = false
      let stop = false
      const lane = async (n: number) => {
        const user = users[n % users.length]!
        for (let i = 0; !stop; i++) {
          const model = i % 2 === 0 ? "o3" : "gpt-4o"
          // Through the survivor, and through the restarted node as soon as it listens.
          const base = restarted && i % 3 === 0 ? baseA : baseB
          const res = await fetch(`${base}/engine/v1/signals`, {
            method: "POST",
            headers: { authorization: `Bearer ${user.key}`, "content-type": "application/json" },
            body: JSON.stringify({ type: "post-tool", adapter: "claude-code", session_id: `s${n}`, metadata: { model, tokens_in: 10 } })
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }), () => undefined)
          if (res === undefined || res.status !== 200) continue
          if (base === baseA) tally.viaRestarted++
          if (res.body.action === "pending") tally.pending.push(res.body)
          if (model === "o3") res.body.ok === true ? tally.allowedBlocked++ : tally.blocked++
        }
      }
      const spent: Array<{ readonly at: number; readonly body: any }> = []
      const spenderLane = async () => {
        while (!stop) {
          const answer = await spend()
          if (answer?.status === 200) spent.push(answer)
        }
      }
      const lanes = [...Array.from({ length: 8 }, (_, n) => lane(n)), spenderLane()]
      await waitFor(async () => tally.blocked, (n) => n >= 40, { timeoutMs: 30_000, what: "load before the kill" })

      a.kill("SIGKILL")
      await exited(a)
      const killedAt = Date.now()
      a = serveProcess(envA)
      restarted = true
      const samples: Array<Readiness> = []
      const ready = await waitFor(
        async () => {
          const r = await readiness(baseA)
          samples.push(r)
          return r
        },
        (r) => r.status === 200,
        { timeoutMs: 90_000, what: "the restarted node to be ready" }
      )
      const blockedAtReady = tally.blocked
      await waitFor(async () => tally.blocked, (n) => n >= blockedAtReady + 40, { timeoutMs: 30_000, what: "load after the restart" })
      // The budget is judged again: blocks only, for a while, after the restart.
      const judgedAgain = await waitFor(async () => spent, (all) => {
        const last = all.slice(-10)
        return last.length === 10 && last[0]!.at > killedAt && last.every((x) => x.body.action === "block")
      }, { timeoutMs: 60_000, what: "the budget to be judged again" })
      stop = true
      await Promise.all(lanes)
      const afterKill = judgedAgain.filter((x) => x.at > killedAt)
      const lastUnjudged = afterKill.filter((x) => x.body.action !== "block").at(-1)
      console.log(
        `two nodes over ${_name}: restarted node ready ${ready.at - killedAt} ms after the kill (owning ${ready.owned?.join(",")}); ` +
          `o3 blocked ${tally.blocked}, allowed ${tally.allowedBlocked}; answered by the restarted node ${tally.viaRestarted}; ` +
          `pending ${tally.pending.length} (${[...new Set(tally.pending.map((p) => p.reason))].join(",")}); ` +
          `spent budget: ${afterKill.length} answers after the kill, ${afterKill.filter((x) => x.body.action === "pending").length} pending, ` +
          `enforced again ${lastUnjudged === undefined ? 0 : lastUnjudged.at - killedAt} ms after the kill`
      )
      expect(tally.allowedBlocked).toBe(0)
      // The spent budget is never answered as allowed: a block, or pending with its reason.
      for (const x of judgedAgain) {
        if (x.body.action === "pending") expect(["no_owner", "forward_failed", "timeout"]).toContain(x.body.reason)
        else expect(x.body, JSON.stringify(x.body)).toMatchObject({ ok: false, action: "block", rule_id: budget.body.id })
      }
      // Both logs give the restarted node a share again: ready only once it owns it.
      for (const r of samples.filter((s) => s.status === 200)) expect(r.owned?.length ?? 0).toBeGreaterThan(0)
      for (const p of tally.pending) expect(["no_owner", "forward_failed", "timeout"]).toContain(p.reason)
    } finally {
      a.kill("SIGTERM")
      b?.kill("SIGTERM")
      await Promise.all([exited(a), b === undefined ? undefined : exited(b)])
    }
  })
})
