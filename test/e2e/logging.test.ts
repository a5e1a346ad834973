import { spawn } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bootstrapOrg, call, freshDatabase } from "../support/harness.ts"
import { childEnv, logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

describe.each(logVariants())("LOG_FORMAT=json (%s)", (_, variant) => {
  it(
    "prints only JSON lines: the start line, an access line per request with its request id and caller, the stop line; never a key",
    { timeout: 120_000 },
    async () => {
      const databaseUrl = await freshDatabase()
      const logEnv = variant()
      const env = {
        ...logEnv,
        DATABASE_URL: databaseUrl,
        PORT: String(await freePort()),
        HOST: "127.0.0.1",
        DEMO_BOOTSTRAP: "false",
        LOG_FORMAT: "json",
        ACCESS_LOG: "true"
      }
      const child = spawn(process.execPath, [bin, "serve"], { env: { ...childEnv(env), NODE_NO_WARNINGS: "1" }, stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk))
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      const server = { baseUrl: `http://127.0.0.1:${env.PORT}` }
      try {
        await waitFor(() => fetch(`${server.baseUrl}/readyz`).then((r) => r.status, () => 0), (s) => s === 200, {
          timeoutMs: 60_000,
          what: "the server to be ready"
        })
        const org = await bootstrapOrg(databaseUrl, "logged", "team")

        const management = await call(server, "GET", "/api/v1/org", { key: org.api_key_live! })
        expect(management.status).toBe(200)
        const signal = await call(server, "POST", "/engine/v1/signals", {
          key: org.license_key,
          body: { type: "user-prompt", adapter: "claude-code", session_id: "cc-logged", metadata: { model: "claude-sonnet-4" } }
        })
        expect(signal.status).toBe(200)
        // A key where it does not belong: in the query string, and a wrong one.
        expect((await call(server, "GET", `/api/v1/org?api_key=${org.api_key_test}`, { key: `${org.api_key_live!.slice(0, -4)}0000` })).status).toBe(401)
        child.kill("SIGTERM")
        // It exits by itself once drained (with the status of a process stopped by a signal).
        expect(await exited).not.toBeNull()

        const lines = output.split("\n").filter((line) => line.trim() !== "")
        const entries = lines.map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>
          } catch {
            throw new Error(`not a JSON line: ${line}`)
          }
        })
        for (const entry of entries) {
          expect(entry).toMatchObject({ timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.any(String), message: expect.any(String) })
        }

        const log = logEnv.KAFKA_TOPIC === undefined ? "pg" : `kafka:${logEnv.KAFKA_TOPIC}`
        expect(entries.find((e) => e.message === "signal-engine listening")).toMatchObject({
          level: "info",
          address: `http://127.0.0.1:${env.PORT}`,
          log,
          log_partitions: expect.any(Number),
          partitions_owned: expect.any(Array)
        })
        // The access line of a request: found by the id its response carried.
        const accessLine = (response: { readonly headers: Headers }) => entries.find((e) => e.request_id === response.headers.get("x-request-id"))
        expect(accessLine(management)).toMatchObject({
          message: "request",
          method: "GET",
          route: "/api/v1/org",
          status: 200,
          org_id: org.org_id,
          duration_ms: expect.any(Number)
        })
        expect(accessLine(signal)).toMatchObject({
          message: "request",
          method: "POST",
          route: "/engine/v1/signals",
          status: 200,
          org_id: org.org_id,
          user_id: org.user_id
        })
        expect(entries.map((e) => e.message)).toContain("signal-engine stopping: draining requests")
        expect(entries[entries.length - 1]!.message).toMatch(/^signal-engine stopped/)
        for (const key of [org.api_key_live!, org.api_key_test, org.license_key, org.api_key_live!.slice(0, -4)]) expect(output).not.toContain(key)
      } finally {
        if (child.exitCode === null) child.kill("SIGKILL")
      }
    }
  )
})
