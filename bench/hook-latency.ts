import { spawn } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"

/**
 * The time a coding tool waits for one hook: the adapter's start, its request and the service's
 * verdict, as the tool runs it: `install <tool>` writes the config, and each event's command line
 * from that config runs through `sh -c` (as the tools do), JSON on stdin, a new process per event.
 * Measured per tool and event, alternating with a bare `node -e 0` (the same node, spawned
 * directly, no shell) so both see the same machine at the same moment: `added_p50_ms` is the
 * hook's time beyond the least any hook written for node costs. Each event also runs against a stub
 * that allows every signal at once (SIGNAL_ENGINE_URL over the settings): `stub_added_p50_ms` is the
 * adapter's own part, without the service's verdict.
 */

const defaultAdapter = join(import.meta.dirname, "..", "adapters")

interface Event {
  readonly event: string
  /** The signal type the event sends. */
  readonly type: string
  readonly input: Record<string, unknown>
  /** An event run (unmeasured) before each measured one, that makes it send its signal. */
  readonly after?: string
}

const shell = { tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_1" }
const claudeStyle: ReadonlyArray<Event> = [
  { event: "UserPromptSubmit", type: "user-prompt", input: { prompt: "Fix the login bug in the auth service" } },
  { event: "PreToolUse", type: "pre-tool", input: shell },
  { event: "PostToolUse", type: "post-tool", input: { ...shell, tool_response: { stdout: "ok" } } },
  { event: "Stop", type: "stop", input: { stop_hook_active: false } }
]

/** Each tool's four everyday events (a prompt, the two around a tool call, the end of a turn). */
const tools: ReadonlyArray<{ readonly tool: string; readonly events: ReadonlyArray<Event> }> = [
  { tool: "claude-code", events: claudeStyle },
  { tool: "codex", events: claudeStyle.map((e) => ({ ...e, input: { ...e.input, model: "gpt-5" } })) },
  {
    tool: "gemini-cli",
    events: [
      // The prompt is judged at BeforeAgent, before any model request (the router's included).
      { event: "BeforeAgent", type: "user-prompt", input: { prompt: "Fix the login bug in the auth service" } },
      { event: "BeforeTool", type: "pre-tool", input: { tool_name: "run_shell_command", tool_input: { command: "npm test" } } },
      {
        event: "AfterTool",
        type: "post-tool",
        input: { tool_name: "run_shell_command", tool_input: { command: "npm test" }, tool_response: { llmContent: "ok" } }
      },
      { event: "AfterAgent", type: "stop", input: {} }
    ]
  },
  {
    tool: "copilot-cli",
    events: [
      { event: "userPromptSubmitted", type: "user-prompt", input: { prompt: "Fix the login bug" } },
      { event: "preToolUse", type: "pre-tool", input: { toolName: "bash", toolArgs: JSON.stringify({ command: "npm test" }) } },
      {
        event: "postToolUse",
        type: "post-tool",
        input: { toolName: "bash", toolArgs: JSON.stringify({ command: "npm test" }), toolResult: { resultType: "success" } }
      },
      { event: "agentStop", type: "stop", input: { stopReason: "end_turn" } }
    ]
  },
  {
    tool: "cursor",
    events: [
      { event: "beforeSubmitPrompt", type: "user-prompt", input: { prompt: "Fix the login bug", model: "gpt-5" } },
      { event: "beforeShellExecution", type: "pre-tool", input: { command: "npm test", model: "gpt-5" } },
      { event: "afterShellExecution", type: "post-tool", input: { command: "npm test", output: "ok", duration: 12, model: "gpt-5" } },
      { event: "stop", type: "stop", input: { status: "completed", model: "gpt-5" } }
    ]
  }
]

const timeRun = (command: string, args: ReadonlyArray<string>, input: string, env: Record<string, string | undefined>): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "pipe"] })
    let stderr = ""
    child.stdout.resume()
    child.stderr.on("data", (c) => (stderr += c))
    child.on("error", reject)
    // The bare start exits without reading its input.
    child.stdin.on("error", () => {})
    child.on("close", (code) => {
      if (code !== 0) reject(new Error(`${args.join(" ")}: exit ${code}: ${stderr}`))
      else resolve(performance.now() - started)
    })
    child.stdin.end(input)
  })

/** The command line `install` wrote for each event (the last word of each of ours is its event). */
const installedCommands = (config: unknown): Map<string, string> => {
  const found = new Map<string, string>()
  const walk = (v: unknown): void => {
    if (typeof v === "string" && v.includes("signal-engine-adapter") && / hook /.test(v)) found.set(v.split(" ").at(-1)!, v)
    else if (Array.isArray(v)) v.forEach(walk)
    else if (v !== null && typeof v === "object") Object.values(v).forEach(walk)
  }
  walk(config)
  return found
}

const configPaths: Record<string, string> = {
  "claude-code": ".claude/settings.json",
  codex: ".codex/hooks.json",
  "gemini-cli": ".gemini/settings.json",
  "copilot-cli": ".copilot/hooks/signal-engine.json",
  cursor: ".cursor/hooks.json"
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
const round = (n: number) => Math.round(n * 10) / 10

export interface HookLatencyRow {
  readonly tool: string
  readonly event: string
  readonly type: string
  readonly runs: number
  readonly p50_ms: number
  readonly p95_ms: number
  readonly node_start_p50_ms: number
  readonly added_p50_ms: number
  readonly ratio_p50: number
  readonly stub_p50_ms: number
  readonly stub_added_p50_ms: number
  /** The hook run by a Node process of its own (SIGNAL_ENGINE_DAEMON=off). */
  readonly node_hook_p50_ms: number
  readonly node_hook_added_p50_ms: number
}

/** Answers every signal `allow` at once, as the service's routes shape it. */
const startStub = async () => {
  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      const allow = { ok: true, signal_id: "sig_stub", action: "allow" }
      const answer = req.url?.endsWith("/batch") ? { results: (JSON.parse(body).signals as Array<unknown>).map(() => allow) } : allow
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }
}

export const hookLatency = async (options: {
  readonly baseUrl: string
  readonly licenseKey: string
  readonly runs: number
  /** The adapters/ folder to install from (another version's, to compare in one run). */
  readonly adapter?: string
  readonly say: (line: string) => void
}): Promise<ReadonlyArray<HookLatencyRow>> => {
  const home = mkdtempSync(join(tmpdir(), "bench-adapter-"))
  const transcript = join(home, "transcript.jsonl")
  writeFileSync(transcript, "")
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    SIGNAL_ENGINE_ADAPTER_HOME: join(home, ".signal-engine"),
    COPILOT_HOME: join(home, ".copilot"),
    CODEX_HOME: join(home, ".codex")
  }
  const bin = join(options.adapter ?? defaultAdapter, "bin", "signal-engine-adapter.js")
  const rows: Array<HookLatencyRow> = []
  const stub = await startStub()
  const stubEnv = { ...env, SIGNAL_ENGINE_URL: stub.url }
  try {
    for (const { tool, events } of tools) {
      await timeRun(process.execPath, [bin, "install", tool, "--url", options.baseUrl, "--license-key", options.licenseKey], "", env)
      const commands = installedCommands(JSON.parse(readFileSync(join(home, configPaths[tool]!), "utf8")))
      for (const { event, type, input, after } of events) {
        const command = commands.get(event)
        if (!command) throw new Error(`${tool}: install wrote no ${event} hook`)
        const payload = JSON.stringify({
          session_id: `bench-${tool}`,
          sessionId: `bench-${tool}`,
          conversation_id: `bench-${tool}`,
          transcript_path: transcript,
          cwd: home,
          hook_event_name: event,
          ...input
        })
        const first = after === undefined ? undefined : commands.get(after)
        const firstPayload = JSON.stringify({ session_id: `bench-${tool}`, cwd: home, hook_event_name: after, prompt: "Fix the login bug" })
        const hook = async (to: Record<string, string | undefined> = env) => {
          if (first !== undefined) await timeRun("/bin/sh", ["-c", first], firstPayload, to)
          return timeRun("/bin/sh", ["-c", command], payload, to)
        }
        // Unmeasured: fills the compile cache and the service's key cache, as a tool's first hooks would.
        for (let i = 0; i < 3; i++) await hook()
        const hooks: Array<number> = []
        const stubbed: Array<number> = []
        const bare: Array<number> = []
        // The same hook run by its own Node process (no resident hook process), as before issue 37's daemon.
        const withNode: Array<number> = []
        for (let i = 0; i < options.runs; i++) {
          bare.push(await timeRun(process.execPath, ["-e", "0"], "", env))
          hooks.push(await hook())
          stubbed.push(await hook(stubEnv))
          withNode.push(await hook({ ...env, SIGNAL_ENGINE_DAEMON: "off" }))
        }
        for (const list of [hooks, stubbed, bare, withNode]) list.sort((a, b) => a - b)
        const p50 = percentile(hooks, 50)
        const base = percentile(bare, 50)
        const row = {
          tool,
          event,
          type,
          runs: options.runs,
          p50_ms: round(p50),
          p95_ms: round(percentile(hooks, 95)),
          node_start_p50_ms: round(base),
          added_p50_ms: round(p50 - base),
          ratio_p50: Math.round((p50 / base) * 100) / 100,
          stub_p50_ms: round(percentile(stubbed, 50)),
          stub_added_p50_ms: round(percentile(stubbed, 50) - base),
          node_hook_p50_ms: round(percentile(withNode, 50)),
          node_hook_added_p50_ms: round(percentile(withNode, 50) - base)
        }
        options.say(
          `hook ${tool} ${type} (${event}): p50 ${row.p50_ms} ms = node -e 0 ${row.node_start_p50_ms} ms + ${row.added_p50_ms} (×${row.ratio_p50}), p95 ${row.p95_ms} ms; against a stub + ${row.stub_added_p50_ms}; its own Node process ${row.node_hook_p50_ms} ms`
        )
        rows.push(row)
      }
    }
  } finally {
    stub.close()
    rmSync(home, { recursive: true, force: true })
  }
  return rows
}
