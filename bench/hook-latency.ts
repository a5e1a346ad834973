import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"

/**
 * The time a coding tool waits for one hook: the adapter's process start, its request and the
 * service's verdict, as the tool runs it (a new `node` process per event, JSON on stdin). Measured
 * per Claude Code event, alternating with a bare `node` start (the same node, an empty script) so
 * both see the same machine at the same moment: `added_ms` is the hook's time beyond what any
 * hook written for node would cost.
 */

const adapterBin = join(import.meta.dirname, "..", "adapters", "bin", "signal-engine-adapter.js")

const events = [
  { event: "UserPromptSubmit", input: { prompt: "Fix the login bug in the auth service" } },
  { event: "PreToolUse", input: { tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_1" } },
  { event: "PostToolUse", input: { tool_name: "Bash", tool_input: { command: "npm test" }, tool_response: { stdout: "ok" }, tool_use_id: "toolu_1" } },
  { event: "Stop", input: { stop_hook_active: false } }
] as const

const timeRun = (args: ReadonlyArray<string>, input: string, env: Record<string, string | undefined>): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(process.execPath, args, { env, stdio: ["pipe", "ignore", "pipe"] })
    let stderr = ""
    child.stderr.on("data", (c) => (stderr += c))
    child.on("error", reject)
    // The bare start exits without reading its input.
    child.stdin.on("error", () => {})
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`exit ${code}: ${stderr}`))
      else resolve(performance.now() - started)
    })
    child.stdin.end(input)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
const round = (n: number) => Math.round(n * 10) / 10

export interface HookLatencyRow {
  readonly event: string
  readonly runs: number
  readonly p50_ms: number
  readonly p95_ms: number
  readonly node_start_p50_ms: number
  readonly added_p50_ms: number
}

export const hookLatency = async (options: {
  readonly baseUrl: string
  readonly licenseKey: string
  readonly runs: number
  readonly say: (line: string) => void
}): Promise<ReadonlyArray<HookLatencyRow>> => {
  const home = mkdtempSync(join(tmpdir(), "bench-adapter-"))
  const empty = join(home, "empty.js")
  writeFileSync(empty, "")
  const transcript = join(home, "transcript.jsonl")
  writeFileSync(transcript, "")
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    SIGNAL_ENGINE_ADAPTER_HOME: join(home, ".signal-engine"),
    SIGNAL_ENGINE_URL: options.baseUrl,
    SIGNAL_ENGINE_LICENSE_KEY: options.licenseKey
  }
  const rows: Array<HookLatencyRow> = []
  try {
    for (const { event, input } of events) {
      const payload = JSON.stringify({ session_id: "bench", transcript_path: transcript, cwd: home, hook_event_name: event, ...input })
      const args = [adapterBin, "hook", "claude-code", event]
      // Unmeasured: fills the compile cache and the service's key cache, as a tool's first hooks would.
      for (let i = 0; i < 3; i++) await timeRun(args, payload, env)
      const hook: Array<number> = []
      const bare: Array<number> = []
      for (let i = 0; i < options.runs; i++) {
        bare.push(await timeRun([empty], "", env))
        hook.push(await timeRun(args, payload, env))
      }
      hook.sort((a, b) => a - b)
      bare.sort((a, b) => a - b)
      const row = {
        event,
        runs: options.runs,
        p50_ms: round(percentile(hook, 50)),
        p95_ms: round(percentile(hook, 95)),
        node_start_p50_ms: round(percentile(bare, 50)),
        added_p50_ms: round(percentile(hook, 50) - percentile(bare, 50))
      }
      options.say(`hook ${event}: p50 ${row.p50_ms} ms (bare node ${row.node_start_p50_ms} ms), p95 ${row.p95_ms} ms`)
      rows.push(row)
    }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
  return rows
}
