import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import { inject } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { startFakeModelServer, type FakeModelServer } from "../../support/fake-model/server.ts"
import { defaultScript, type FakeScript } from "../../support/fake-model/script.ts"
import { bootstrapOrg, call, startServer, type TestServer } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"

/** The adapter's command, as a developer's machine runs it. */
export const adapterBin = join(import.meta.dirname, "..", "..", "..", "adapters", "bin", "signal-engine-adapter.js")

/** A coding tool's real CLI, installed by infra/coding-tools/install.sh. */
export const cli = (name: "claude" | "codex" | "gemini" | "copilot"): string => join(inject("codingToolsBin"), name)

export interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a program to its end (killed after `timeoutMs`), with `input` on its standard input. */
export const run = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string | undefined>; readonly cwd?: string; readonly input?: string; readonly timeoutMs?: number } = {}
): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c) => (stdout += c))
    child.stderr.on("data", (c) => (stderr += c))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    // A program that exits without reading its input closes the pipe: EPIPE is no failure here.
    child.stdin.on("error", () => undefined)
    child.stdin.end(options.input ?? "")
  })

/**
 * One developer's world: the service with an org, a home folder of its own (the tools' configs and
 * the adapter's settings and spool live there, never in the real home), and the fake model server.
 */
export interface World {
  readonly server: TestServer
  readonly org: Bootstrapped
  /** The management API key of the license key's environment. */
  readonly apiKey: string
  readonly home: string
  /** A project folder to run the tools in. */
  readonly workdir: string
  readonly model: FakeModelServer
  /** The environment of a process on this developer's machine (HOME and the adapter's home set). */
  readonly env: (extra?: Record<string, string | undefined>) => Record<string, string | undefined>
  /** Runs the adapter's command (install, doctor, hook, …). */
  readonly adapter: (args: ReadonlyArray<string>, options?: { readonly input?: string; readonly env?: Record<string, string | undefined> }) => Promise<Ran>
  /** Creates a rule through the management API; returns it. */
  readonly rule: (rule: Record<string, unknown>) => Promise<any>
  /**
   * Waits until a rule decides the verdict of a probe signal (adapter `rule-probe`, so no tool's
   * sessions see it): rule changes reach verdicts within the rule cache's refresh. For rules that
   * judge a signal by itself (model_filter, org_policy), not budgets.
   */
  readonly ruleInForce: (ruleId: string, probe: { readonly type: string; readonly metadata: Record<string, unknown> }) => Promise<void>
  /** The org's sessions of one adapter through the management API, newest first, with their signals. */
  readonly sessions: (adapter: string, server?: { readonly baseUrl: string }) => Promise<ReadonlyArray<any>>
  /**
   * The adapter's newest session once `done` holds for it, polled at most every 250 ms (each poll
   * is several management API requests, which are rate limited). `server`: a restarted service.
   */
  readonly sessionWhere: (adapter: string, done: (s: any) => boolean, what: string, server?: { readonly baseUrl: string }) => Promise<any>
  /** What the service charges for these model calls sent by hand (one signal's metadata each), in a session of their own. */
  readonly costOf: (calls: ReadonlyArray<Record<string, unknown>>) => Promise<number>
  readonly stop: () => Promise<void>
}

export const startWorld = async (script: FakeScript = defaultScript): Promise<World> => {
  const server = await startServer()
  const org = await bootstrapOrg(server.databaseUrl, `adapters-${Math.random().toString(36).slice(2, 8)}`, "team")
  const apiKey = org.license_key_environment === "live" ? org.api_key_live! : org.api_key_test
  const home = mkdtempSync(join(tmpdir(), "adapter-home-"))
  const workdir = mkdtempSync(join(tmpdir(), "adapter-project-"))
  const model = await startFakeModelServer(script)
  const env = (extra: Record<string, string | undefined> = {}) => {
    const base: Record<string, string | undefined> = {}
    // Only what a shell on a developer's machine has: no test runner or service settings leak in.
    for (const key of ["PATH", "LANG", "TERM", "TMPDIR", "USER", "SHELL"]) base[key] = process.env[key]
    base.PATH = [join(process.execPath, ".."), base.PATH].filter(Boolean).join(delimiter)
    return { ...base, HOME: home, SIGNAL_ENGINE_ADAPTER_HOME: join(home, ".signal-engine"), NO_COLOR: "1", ...extra }
  }
  const sessions = async (adapter: string, at: { readonly baseUrl: string } = server) => {
    const list = await call(at, "GET", `/api/v1/sessions?adapter=${encodeURIComponent(adapter)}`, { key: apiKey })
    return Promise.all((list.body.data as Array<any>).map(async (s) => (await call(at, "GET", `/api/v1/sessions/${s.id}`, { key: apiKey })).body))
  }
  return {
    server,
    org,
    apiKey,
    home,
    workdir,
    model,
    env,
    adapter: (args, options = {}) => run(process.execPath, [adapterBin, ...args], { env: env(options.env), cwd: workdir, input: options.input ?? "" }),
    rule: async (rule) => {
      const r = await call(server, "POST", "/api/v1/rules", {
        key: apiKey,
        body: { scope: "org", scope_id: org.org_id, priority: 1, ...rule }
      })
      if (r.status !== 201) throw new Error(`rule not created: ${r.status} ${JSON.stringify(r.body)}`)
      return r.body
    },
    ruleInForce: async (ruleId, probe) => {
      await waitFor(
        async () =>
          (await call(server, "POST", "/engine/v1/signals", {
            key: org.license_key,
            body: { ...probe, adapter: "rule-probe", session_id: "probe" }
          })).body,
        (b) => b?.rule_id === ruleId,
        { timeoutMs: 10_000, what: `rule ${ruleId} in force` }
      )
    },
    sessions,
    sessionWhere: (adapter, done, what, at = server) => {
      let last = 0
      return waitFor(
        async () => {
          await new Promise((r) => setTimeout(r, Math.max(0, last + 250 - Date.now())))
          last = Date.now()
          return (await sessions(adapter, at))[0]
        },
        (s) => s !== undefined && done(s),
        { timeoutMs: 30_000, what }
      )
    },
    costOf: async (calls) => {
      const adapter = `reference-${randomBytes(4).toString("hex")}`
      for (const metadata of calls) {
        const sent = await call(server, "POST", "/engine/v1/signals", {
          key: org.license_key,
          body: { type: "token-milestone", adapter, session_id: adapter, metadata }
        })
        if (sent.status !== 200 || sent.body.ok !== true) throw new Error(`reference signal not taken: ${JSON.stringify(sent.body)}`)
      }
      const session = await waitFor(() => sessions(adapter), (s) => s[0]?.signal_count === calls.length, { what: "the reference session" })
      return session[0].cost_usd as number
    },
    stop: async () => {
      await model.close()
      await server.stop()
      // The resident hook process may still be writing the home's state as it notices the
      // home going and exits: retried, as rm -rf would be by hand.
      rmSync(home, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
      rmSync(workdir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 })
    }
  }
}
