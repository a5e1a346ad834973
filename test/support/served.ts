import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { childEnv } from "./log-variants.ts"
import { waitFor } from "./wait.ts"

/** The service as its own process, as an operator runs it (`signal-engine serve`), for tests that kill or restart it. */

const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

/** Starts `signal-engine serve` with `env` (over the test's log settings); its stderr is the test's. */
export const serveProcess = (env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [bin, "serve"], { env: { ...childEnv(env), NODE_NO_WARNINGS: "1" }, stdio: ["ignore", "ignore", "inherit"] })

/** Starts the service on `env.PORT` and waits until `/readyz` answers 200. */
export const spawnServer = async (env: Record<string, string>) => {
  const child = serveProcess(env)
  const baseUrl = `http://127.0.0.1:${env.PORT}`
  await waitFor(() => fetch(`${baseUrl}/readyz`).then((r) => r.status, () => 0), (s) => s === 200, { timeoutMs: 60_000, what: "the server to be ready" })
  return { child, baseUrl }
}

/** Resolves when the process has exited, including when it already has. */
export const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once("exit", () => resolve()))
