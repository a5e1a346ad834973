import { spawn } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect } from "vitest"
import { startFakeModelServer } from "../../support/fake-model/server.ts"
import { waitFor } from "../../support/wait.ts"
import { adapterBin, cli, run, type Ran, type World } from "./support.ts"

/** How the Claude Code tests run the real `claude`: its config in the world's home, every model call to a fake. */

export const claudeConfigDir = (w: World): string => join(w.home, ".claude")
export const claudeUserSettings = (w: World): string => join(claudeConfigDir(w), "settings.json")

/** Everything the CLI would otherwise reach beyond loopback is off; HOME is the world's. */
export const claudeEnv = (w: World, extra: Record<string, string | undefined> = {}, modelUrl = w.model.url) =>
  w.env({
    CLAUDE_CONFIG_DIR: claudeConfigDir(w),
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: "sk-ant-test-0000",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_BUG_COMMAND: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    ...extra
  })

/**
 * `claude` with `args` in the world's project, its stdout and stderr each through a shell pipe, as
 * in a terminal or a CI log (Node gives a child socket pairs, which a hook cannot reopen through
 * /proc to tell the user what `claude -p` would not show).
 */
export const runClaude = (
  w: World,
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string | undefined>; readonly input?: string; readonly modelUrl?: string } = {}
): Promise<Ran> =>
  run("/bin/bash", ["-o", "pipefail", "-c", `"$@" 2> >(cat >&2) | cat`, "claude", cli("claude"), ...args], {
    env: claudeEnv(w, options.env, options.modelUrl),
    cwd: w.workdir,
    timeoutMs: 150_000,
    input: options.input ?? ""
  })

/**
 * Installs the adapter's Claude Code hooks with a copy of node in a folder of its own (so a test can
 * take that Node away, as an upgrade or nvm does); answers the copy's path and its folder.
 */
export const installClaudeHooksWithNodeCopy = async (w: World): Promise<{ readonly node: string; readonly dir: string }> => {
  const dir = mkdtempSync(join(tmpdir(), "adapter-node-"))
  const node = join(dir, "node")
  copyFileSync(process.execPath, node)
  const installed = await run(node, [adapterBin, "install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key], {
    env: w.env({ CLAUDE_CONFIG_DIR: claudeConfigDir(w) }),
    cwd: w.workdir
  })
  expect(installed.code, installed.stderr).toBe(0)
  return { node, dir }
}

/** Installs the adapter's hooks in the user's settings, as a developer does. */
export const installClaudeHooks = async (w: World): Promise<void> => {
  mkdirSync(claudeConfigDir(w), { recursive: true })
  const installed = await w.adapter(["install", "claude-code", "--url", w.server.baseUrl, "--license-key", w.org.license_key], {
    env: { CLAUDE_CONFIG_DIR: claudeConfigDir(w) }
  })
  expect(installed.code, installed.stderr).toBe(0)
}

/**
 * The model `claude -p` with `args` sends its request to, as a fake model server of its own sees it
 * (so the world's fake records nothing): what the CLI picks from its defaults, settings and flags.
 */
export const modelClaudeUses = async (w: World, args: ReadonlyArray<string> = [], env: Record<string, string> = {}): Promise<string> => {
  const probe = await startFakeModelServer({ finalText: "Hello.", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } })
  try {
    const ran = await runClaude(w, ["-p", "hello", ...args], { modelUrl: probe.url, env })
    expect(ran.code, ran.stderr).toBe(0)
    const model = (probe.modelCalls()[0]?.body as any)?.model
    expect(typeof model, JSON.stringify(probe.requests)).toBe("string")
    return model as string
  } finally {
    await probe.close()
  }
}

/** A screen of the interactive CLI, typed into as a person does. */
export interface Terminal {
  /** Types `keys`, then waits until the screen shows `text` (compared without spaces: the UI moves its cursor between words). */
  readonly type: (keys: string, text: string) => Promise<void>
  readonly screen: () => string
  readonly close: () => void
}

/**
 * Interactive `claude` in a pseudo-terminal (util-linux `script`), past the first-run dialogs as a
 * person who has used it before: onboarding done, the project trusted, the API key approved.
 */
export const interactiveClaude = async (w: World, env: Record<string, string | undefined> = {}): Promise<Terminal> => {
  const state = join(claudeConfigDir(w), ".claude.json")
  let known: Record<string, unknown> = {}
  try {
    known = JSON.parse(readFileSync(state, "utf8"))
  } catch {
    // first run
  }
  writeFileSync(
    state,
    JSON.stringify({
      ...known,
      hasCompletedOnboarding: true,
      projects: { [w.workdir]: { hasTrustDialogAccepted: true } },
      customApiKeyResponses: { approved: ["sk-ant-test-0000"], rejected: [] }
    })
  )
  const child = spawn("script", ["-qfc", cli("claude"), "/dev/null"], {
    env: claudeEnv(w, { TERM: "xterm-256color", ...env }) as NodeJS.ProcessEnv,
    cwd: w.workdir
  })
  let out = ""
  child.stdout.on("data", (c) => (out += c))
  // Keys typed as the session ends (killed) meet a closed pipe: not a failure of the test.
  child.stdin.on("error", () => undefined)
  const screen = () => out.replace(/\x1b\[[0-9;?<>]*[a-zA-Z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?/g, "").replace(/\s+/g, "")
  const shows = (text: string) =>
    waitFor(async () => screen(), (s) => s.includes(text.replace(/\s+/g, "")), { timeoutMs: 30_000, what: `the screen to show "${text}"` })
  await shows("auto mode on")
  return {
    type: async (keys, text) => {
      child.stdin.write(keys)
      await shows(text)
    },
    screen,
    close: () => child.kill("SIGKILL")
  }
}
