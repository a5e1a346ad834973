import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, startServer } from "../support/harness.ts"
import { childEnv, logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

const spawnServer = (env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [bin, "serve"], { env: { ...childEnv(env), NODE_NO_WARNINGS: "1" }, stdio: ["ignore", "ignore", "inherit"] })

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))

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

describe.each(logVariants())("answers without a verdict over %s", (_name, logEnv) => {
  it("a signal not judged within the wait is pending with a reason, unless a stateless rule blocks it", async () => {
    // No wait at all: every signal is answered before its actor has judged it.
    const server = await startServer({ env: { ...logEnv(), INGEST_WAIT: "0 millis" } })
    try {
      const org = await bootstrapOrg(server.databaseUrl, "no-wait", "team")
      const rule = await call(server, "POST", "/api/v1/rules", {
        key: org.api_key_live!,
        body: {
          scope: "org", scope_id: org.org_id, name: "No o3", type: "model_filter", action: "block",
          action_config: { message: "o3 is not allowed" }, condition: { model: { in: ["o3"] } }
        }
      })
      expect(rule.status).toBe(201)
      const signal = (metadata: Record<string, unknown>) =>
        call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: { type: "post-tool", adapter: "claude-code", session_id: "s1", metadata } })
      // Rules are judged by the cache, reloaded on a change: the block is in force once it has loaded.
      const blocked = await waitFor(() => signal({ model: "o3", tokens_in: 10 }), (r) => r.body.ok === false, { what: "the rule to load" })
      expect(blocked.body).toMatchObject({ ok: false, action: "block", rule_id: rule.body.id, message: "o3 is not allowed" })
      const allowed = await signal({ model: "gpt-4o", tokens_in: 10 })
      expect(allowed.body).toMatchObject({ ok: true, action: "pending", reason: "timeout" })
      expect(allowed.body.message).toBeTypeOf("string")
      const batch = await call(server, "POST", "/engine/v1/signals/batch", {
        key: org.license_key,
        body: { signals: [{ type: "post-tool", adapter: "claude-code", session_id: "s1", metadata: { model: "o3" } }, { type: "post-tool", adapter: "claude-code", session_id: "s1", metadata: { model: "gpt-4o" } }] }
      })
      expect(batch.body.results).toMatchObject([
        { ok: false, action: "block", rule_id: rule.body.id },
        { ok: true, action: "pending", reason: "timeout" }
      ])
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
