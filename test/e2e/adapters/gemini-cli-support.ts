import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect } from "vitest"
import { geminiModelOf, usageFor } from "../../support/fake-model/gemini.ts"
import type { FakeUsage } from "../../support/fake-model/script.ts"
import { cli, run, startWorld, type Ran, type World } from "./support.ts"

/**
 * The real `gemini` CLI, headless (-p), against the fake model server, with the hooks the
 * adapter's own `install gemini-cli` writes. Gemini reports cache reads only
 * (cachedContentTokenCount, inside promptTokenCount), so the script has no cache writes.
 */
export const usage: FakeUsage = { input: 1000, output: 250, cacheRead: 4000, cacheWrite: 0 }

export const perTest = { timeout: 180_000 }

export const userSettings = (w: World): string => join(w.home, ".gemini", "settings.json")

/** Where install points the CLI's telemetry. */
export const telemetryOutfile = (w: World): string => join(w.home, ".gemini", "signal-engine-telemetry.log")

/** Only the fake model server is reachable: its base URL, a dummy key. */
export const geminiEnv = (w: World, extra: Record<string, string | undefined> = {}) =>
  w.env({
    GEMINI_API_KEY: "test-gemini-key",
    GOOGLE_GEMINI_BASE_URL: w.model.url,
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    GEMINI_CLI_NO_RELAUNCH: "true",
    ...extra
  })

/** One headless prompt, tools approved (--yolo), as `gemini -p` prints it; `args` before the prompt. */
export const gemini = (
  w: World,
  prompt: string,
  options: { readonly env?: Record<string, string | undefined>; readonly args?: ReadonlyArray<string> } = {}
): Promise<Ran> => run(cli("gemini"), [...(options.args ?? []), "-p", prompt, "--yolo"], { env: geminiEnv(w, options.env), cwd: w.workdir, timeoutMs: 150_000 })

/**
 * A user's settings before the adapter: auth, no usage statistics or updates, telemetry off, a hook
 * of their own; `model` as `model.name` (none: the CLI's default, auto routing).
 */
export const ownSettings = (model?: string) => ({
  security: { auth: { selectedType: "gemini-api-key" } },
  ...(model ? { model: { name: model } } : {}),
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  hooks: { Notification: [{ matcher: "*", hooks: [{ type: "command", command: "notify-send gemini" }] }] }
})

/** A world with the user's settings written and the adapter installed for Gemini CLI. */
export const setUpGemini = async (model?: string): Promise<World> => {
  const w = await startWorld({ finalText: "All done.", usage })
  mkdirSync(join(w.home, ".gemini"), { recursive: true })
  writeFileSync(userSettings(w), JSON.stringify(ownSettings(model), null, 2))
  const installed = await w.adapter(["install", "gemini-cli", "--url", w.server.baseUrl, "--license-key", w.org.license_key])
  expect(installed.code, installed.stderr).toBe(0)
  return w
}

export interface Served {
  readonly model: string
  readonly tokensIn: number
  readonly tokensOut: number
  readonly cacheRead: number
}

/** What the fake model server answered each model request it recorded to have used, in order. */
export const served = (w: World): ReadonlyArray<Served> =>
  w.model.modelCalls().flatMap((r) => {
    const model = geminiModelOf(r.path)
    if (!model) return []
    const u = usageFor(r.path, r.body, w.model.script.usage)
    return [{ model, tokensIn: u.input + u.cacheRead + u.cacheWrite, tokensOut: u.output, cacheRead: u.cacheRead }]
  })

export const sum = (xs: ReadonlyArray<Served>, f: (x: Served) => number): number => xs.reduce((n, x) => n + f(x), 0)
