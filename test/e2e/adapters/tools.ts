import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { inject } from "vitest"
import { usageFor } from "../../support/fake-model/gemini.ts"
import type { FakeUsage, RecordedRequest } from "../../support/fake-model/script.ts"
import { claudeConfigDir, claudeEnv } from "./claude.ts"
import { geminiEnv, ownSettings as geminiSettings } from "./gemini-cli-support.ts"
import { cli, run, type Ran, type World } from "./support.ts"

/**
 * How each coding tool's real CLI is set up and run headless against the fake model server, for
 * the scenarios every tool must pass alike (the contract). Nothing a CLI would reach beyond
 * loopback is on: update checks, telemetry and sign-in are off and the provider is the fake.
 */
export interface ToolDriver {
  /** The adapter's name for the tool (`install <adapter>`, the sessions' `adapter`). */
  readonly adapter: "claude-code" | "codex" | "gemini-cli" | "copilot-cli"
  /** The model the user configured, a name the price database knows. */
  readonly model: string
  /** The name of the tool's shell tool, as its hooks report it. */
  readonly shellTool: string
  /** What the user is shown of a prompt the adapter blocked with `message`. */
  readonly blockedPromptShows: (message: string) => string
  /** What the fake reports per model call; a tool that reports no cache writes gets none. */
  readonly usage: FakeUsage
  /** What the fake answered one recorded model request to have used (the script's usage, or a variation of it). */
  readonly servedUsage?: (request: RecordedRequest, script: FakeUsage) => FakeUsage
  /** The provider's published prices of `model`, USD per million tokens, where the test states them. */
  readonly publishedPrice?: FakeUsage
  /** The user's own settings before the adapter (the model, offline switches). */
  readonly prepare: (w: World) => void
  /** The environment `install` and `doctor` need to find the tool's config. */
  readonly configEnv: (w: World) => Record<string, string>
  /** One headless prompt, tools approved, through a shell pipe; `output` is everything the user sees. */
  readonly run: (
    w: World,
    prompt: string,
    options?: { readonly cwd?: string; readonly env?: Record<string, string | undefined> }
  ) => Promise<Ran & { readonly output: string }>
}

/** The input tokens one model call of `usage` counts (tokens_in includes cache reads and writes). */
export const tokensInOf = (usage: FakeUsage) => usage.input + usage.cacheRead + usage.cacheWrite

/** What each model request the fake answered so far used, in order. */
export const servedCalls = (w: World, driver: ToolDriver): ReadonlyArray<FakeUsage> =>
  w.model.modelCalls().map((r) => driver.servedUsage?.(r, w.model.script.usage) ?? w.model.script.usage)

/** The sum of one figure over calls. */
export const total = (calls: ReadonlyArray<FakeUsage>, figure: (u: FakeUsage) => number) => calls.reduce((n, u) => n + figure(u), 0)

/**
 * Runs a CLI through a shell pipe, its stdout and stderr together, as in a terminal or a CI log
 * (Node gives a child socket pairs for stdio, which the adapter cannot reopen through /proc to
 * show a headless user its warnings).
 */
const piped = async (command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env: Record<string, string | undefined> }) => {
  const ran = await run("/bin/bash", ["-o", "pipefail", "-c", `"$@" 2>&1 | cat`, "tool", command, ...args], { ...options, timeoutMs: 180_000 })
  return { ...ran, output: ran.stdout }
}

const claudeCode: ToolDriver = {
  adapter: "claude-code",
  model: "claude-sonnet-4-5",
  shellTool: "Bash",
  blockedPromptShows: (message) => message,
  usage: { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 },
  // Anthropic's list prices for claude-sonnet-4-5 (≤ 200k input).
  publishedPrice: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  prepare: (w) => {
    mkdirSync(claudeConfigDir(w), { recursive: true })
    writeFileSync(join(claudeConfigDir(w), "settings.json"), JSON.stringify({ model: claudeCode.model }))
  },
  configEnv: (w) => ({ CLAUDE_CONFIG_DIR: claudeConfigDir(w) }),
  run: (w, prompt, options = {}) =>
    piped(cli("claude"), ["-p", prompt, "--allowedTools", "Bash"], { cwd: options.cwd ?? w.workdir, env: claudeEnv(w, options.env) })
}

const codex: ToolDriver = {
  adapter: "codex",
  model: "gpt-5-codex",
  shellTool: "Bash",
  blockedPromptShows: (message) => `signal-engine: blocked: ${message}`,
  usage: { input: 1000, output: 200, cacheRead: 4000, cacheWrite: 0 },
  prepare: (w) => {
    mkdirSync(join(w.home, ".codex"), { recursive: true })
    writeFileSync(
      join(w.home, ".codex", "config.toml"),
      [
        `model = "${codex.model}"`,
        `model_provider = "fake"`,
        `check_for_update_on_startup = false`,
        ``,
        `[model_providers.fake]`,
        `name = "Fake"`,
        `base_url = "${w.model.url}/v1"`,
        `wire_api = "responses"`,
        `env_key = "FAKE_OPENAI_API_KEY"`,
        ``,
        `[analytics]`,
        `enabled = false`,
        ``,
        `[feedback]`,
        `enabled = false`,
        ``
      ].join("\n")
    )
  },
  configEnv: () => ({}),
  run: async (w, prompt, options = {}) =>
    piped(cli("codex"), [
      "exec",
      "--color",
      "never",
      "--skip-git-repo-check",
      "--dangerously-bypass-hook-trust",
      "--dangerously-bypass-approvals-and-sandbox",
      prompt
    ], {
      cwd: options.cwd ?? w.workdir,
      env: w.env({
        FAKE_OPENAI_API_KEY: "sk-fake",
        HTTPS_PROXY: "http://127.0.0.1:9",
        HTTP_PROXY: "http://127.0.0.1:9",
        NO_PROXY: "127.0.0.1,localhost",
        ...options.env
      })
    })
}

const geminiCli: ToolDriver = {
  adapter: "gemini-cli",
  model: "gemini-2.5-flash",
  shellTool: "run_shell_command",
  blockedPromptShows: (message) => `Agent execution stopped: ${message}`,
  // Gemini reports cache reads only (cachedContentTokenCount, inside promptTokenCount).
  usage: { input: 1000, output: 250, cacheRead: 4000, cacheWrite: 0 },
  // The fake varies Gemini's usage per request, so a request counted twice or missed shows.
  servedUsage: (request, script) => usageFor(request.path, request.body, script),
  prepare: (w) => {
    mkdirSync(join(w.home, ".gemini"), { recursive: true })
    writeFileSync(join(w.home, ".gemini", "settings.json"), JSON.stringify(geminiSettings(geminiCli.model)))
  },
  configEnv: () => ({}),
  run: async (w, prompt, options = {}) =>
    piped(cli("gemini"), ["-p", prompt, "--yolo"], {
      cwd: options.cwd ?? w.workdir,
      env: geminiEnv(w, options.env)
    })
}

const copilotCli: ToolDriver = {
  adapter: "copilot-cli",
  model: "gpt-4.1",
  shellTool: "bash",
  blockedPromptShows: (message) => message,
  usage: { input: 1200, output: 300, cacheRead: 5000, cacheWrite: 800 },
  prepare: () => {},
  configEnv: () => ({}),
  // Offline; the CLI unpacks its bundled package into one cache beside the installed CLIs.
  run: async (w, prompt, options = {}) =>
    piped(cli("copilot"), ["-p", prompt, "--allow-all-tools", "--no-ask-user"], {
      cwd: options.cwd ?? w.workdir,
      env: w.env({
        COPILOT_OFFLINE: "true",
        COPILOT_AUTO_UPDATE: "false",
        COPILOT_PROVIDER_BASE_URL: `${w.model.url}/v1`,
        COPILOT_PROVIDER_API_KEY: "sk-test-0000",
        COPILOT_MODEL: copilotCli.model,
        COPILOT_PKG_CACHE_HOME: join(inject("codingToolsBin"), "..", "..", ".copilot-package-cache"),
        ...options.env
      })
    })
}

/** The four tools whose real CLIs the contract runs. */
export const tools: ReadonlyArray<ToolDriver> = [claudeCode, codex, geminiCli, copilotCli]

/** Each driver by name, for the tools' own suites. */
export const drivers = { claudeCode, codex, geminiCli, copilotCli }

/** The user's settings, then the adapter's `install` of `driver`'s tool into the world's home. */
export const installInto = async (w: World, driver: ToolDriver): Promise<void> => {
  driver.prepare(w)
  const installed = await w.adapter(["install", driver.adapter, "--url", w.server.baseUrl, "--license-key", w.org.license_key], {
    env: driver.configEnv(w)
  })
  if (installed.code !== 0) throw new Error(`install ${driver.adapter} failed: ${installed.stderr}`)
}
