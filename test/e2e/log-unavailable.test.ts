import { describe, expect, it } from "vitest"
import { sendSignals } from "../../adapters/src/client.js"
import { decide } from "../../adapters/src/hook.js"
import { blockO3 } from "../support/block-rule.ts"
import { bootstrapOrg, call, withServerAndDatabase } from "../support/harness.ts"
import { waitFor } from "../support/wait.ts"

/**
 * The log does not take a signal (here: PgLog's table locked by another transaction, so every
 * append waits past its timeout). A signal that a model_filter blocks is still answered as
 * blocked, in the 503 that says the signal may not be recorded, and the adapter enforces it;
 * a signal no stateless rule blocks gets the plain 503, and the adapter its fail mode. Once the
 * lock goes, what was in flight lands, and sending again under the same key counts it once.
 */
describe("while the signal log does not take appends", () => {
  it(
    "a stateless block is still a block, on both endpoints and in the adapter",
    { timeout: 90_000 },
    () =>
      withServerAndDatabase({ LOG_PARTITIONS: "4" }, async (server, locker) => {
        const org = await bootstrapOrg(server.databaseUrl, "log-down", "team")
        const rule = await blockO3(server, org)
        const signal = (model: string, key: string) => ({
          type: "post-tool",
          adapter: "claude-code",
          session_id: "s1",
          metadata: { model, tokens_in: 10 },
          idempotency_key: key
        })
        expect((await call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("gpt-4o", "warm-up") })).body.ok).toBe(true)

        await locker.query("BEGIN")
        await locker.query("LOCK TABLE signal_log IN EXCLUSIVE MODE")
        const target = { url: server.baseUrl, license_key: org.license_key }
        const [blocked, allowed, batch, adapter] = await Promise.all([
          call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("o3", "k-o3") }),
          call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("gpt-4o", "k-4o") }),
          call(server, "POST", "/engine/v1/signals/batch", {
            key: org.license_key,
            body: { signals: [signal("o3", "b-o3"), { type: "nope", adapter: "claude-code", session_id: "s1" }, signal("gpt-4o", "b-4o")] }
          }),
          sendSignals(target, [{ ...signal("o3", "a-o3") }], 30_000)
        ])
        await locker.query("COMMIT")

        // The appends timed out in flight: whether they land is not known, and the answers say so.
        expect(blocked.status).toBe(503)
        expect(blocked.body).toMatchObject({
          code: "outcome_unknown",
          status: 503,
          verdicts: [{ ok: false, action: "block", rule_id: rule, message: "o3 is not allowed" }]
        })
        expect(blocked.body.error).toMatch(/may be recorded: send them again with their idempotency keys/)
        expect(blocked.body.request_id).toMatch(/^req_/)
        expect(blocked.headers.get("retry-after")).toBe("2")
        expect(allowed.status).toBe(503)
        expect(allowed.body.code).toBe("outcome_unknown")
        expect(allowed.body.verdicts).toBeUndefined()
        expect(batch.status).toBe(503)
        expect(batch.body.verdicts).toEqual([{ ok: false, action: "block", rule_id: rule, message: "o3 is not allowed" }, null, null])

        // The adapter, failing open, blocks all the same (and spools the signal: it is unreachable).
        expect(adapter).toMatchObject({ kind: "unreachable", reason: "HTTP 503 outcome_unknown", blocked: { rule_id: rule } })
        const settings = {
          url: target.url,
          license_key: org.license_key,
          fail_mode: "open" as const,
          send_prompts: false,
          timeout_ms: 3000,
          project_id: undefined
        }
        expect(decide(adapter, settings)).toEqual({ kind: "block", message: "o3 is not allowed" })

        // The appends were in flight, not dropped: they land once the lock is gone, and a client
        // sending again under the same key is told of the one it sent before.
        const again = await call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("gpt-4o", "k-4o") })
        expect(again.status).toBe(200)
        const events = await waitFor(
          () => call(server, "GET", "/api/v1/events?limit=100", { key: org.api_key_live! }),
          (r) => r.status === 200 && r.body.data.length >= 6,
          { what: "the in-flight signals to land" }
        )
        expect(events.body.data.length).toBe(6) // warm-up, k-o3, k-4o (once), b-o3, b-4o, a-o3
      })
  )

  it(
    "says 'not accepted' only when the log refused the signals, and then they are not there",
    { timeout: 60_000 },
    () =>
      withServerAndDatabase({ LOG_PARTITIONS: "4" }, async (server, admin) => {
        const org = await bootstrapOrg(server.databaseUrl, "log-refuses", "team")
        const rule = await blockO3(server, org)
        const signal = (model: string) => ({ type: "post-tool", adapter: "claude-code", session_id: "s1", metadata: { model, tokens_in: 10 } })
        // Every new row of the log refused by the database: the statement fails, nothing commits.
        await admin.query("ALTER TABLE signal_log ADD CONSTRAINT refuse_all CHECK (false) NOT VALID")
        const [refused, blocked] = await Promise.all([
          call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("gpt-4o") }),
          call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("o3") })
        ])
        await admin.query("ALTER TABLE signal_log DROP CONSTRAINT refuse_all")
        expect(refused.status).toBe(503)
        expect(refused.body).toMatchObject({ code: "log_unavailable", status: 503 })
        expect(refused.headers.get("retry-after")).toBe("2")
        expect(refused.body.error).toMatch(/were not accepted/)
        expect(blocked.body).toMatchObject({ code: "log_unavailable", verdicts: [{ ok: false, action: "block", rule_id: rule }] })
        // Told "not accepted", and indeed not there: the next signal is the org's first event.
        const next = await call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal("gpt-4o") })
        expect(next.status).toBe(200)
        const events = await waitFor(
          () => call(server, "GET", "/api/v1/events?limit=100", { key: org.api_key_live! }),
          (r) => r.status === 200 && r.body.data.length >= 1
        )
        expect(events.body.data.map((e: { signal_id: string }) => e.signal_id)).toEqual([next.body.signal_id])
      })
  )

  it(
    "a redact judged from the signal alone is answered as redact, which the adapter then enforces",
    { timeout: 60_000 },
    () =>
      withServerAndDatabase({ LOG_PARTITIONS: "4" }, async (server, admin) => {
        const org = await bootstrapOrg(server.databaseUrl, "log-refuses-redact", "team")
        const created = await call(server, "POST", "/api/v1/rules", {
          key: org.api_key_live!,
          body: { name: "redact keys", type: "org_policy", scope: "org", scope_id: org.org_id, condition: { secret_kinds: ["*"] }, action: "redact" }
        })
        expect(created.status, JSON.stringify(created.body)).toBe(201)
        const findings = [{ kind: "aws_access_token", where: "tool_input.command", fingerprint: "0".repeat(32) }]
        const signal = { type: "pre-tool", adapter: "claude-code", session_id: "s1", metadata: { tool_name: "Bash", findings } }
        await waitFor(
          () => call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal }),
          (r) => r.body?.rule_id === created.body.id,
          { what: "the redact rule in force" }
        )
        await admin.query("ALTER TABLE signal_log ADD CONSTRAINT refuse_all CHECK (false) NOT VALID")
        const target = { url: server.baseUrl, license_key: org.license_key }
        const [refused, adapter] = await Promise.all([
          call(server, "POST", "/engine/v1/signals", { key: org.license_key, body: signal }),
          sendSignals(target, [{ ...signal, idempotency_key: "a-redact" }], 30_000)
        ])
        await admin.query("ALTER TABLE signal_log DROP CONSTRAINT refuse_all")
        expect(refused.body).toMatchObject({ code: "log_unavailable", verdicts: [{ ok: false, action: "redact", rule_id: created.body.id }] })
        const settings = {
          url: target.url,
          license_key: org.license_key,
          fail_mode: "open" as const,
          send_prompts: false,
          timeout_ms: 3000,
          project_id: undefined
        }
        expect(decide(adapter, settings)).toEqual({ kind: "redact", message: `Secrets taken out by signal-engine policy (${created.body.id})` })
      })
  )
})
