// @ts-check
import { customPatterns } from "./custom-patterns.js"
import { fingerprintKey, fingerprintOf } from "./fingerprint.js"
import { scanHookInput } from "./hook-input.js"
import { pathsOf } from "./paths.js"
import { redactValue } from "./redact.js"

/**
 * What the adapter adds to a prompt's or a tool call's signal, and takes out of it, before it is
 * sent: `findings` ({kind, where, fingerprint}: never the secret), `paths` (the files a tool call
 * names, for protected-path rules), `scan_truncated` (more than the scan's cap), and every
 * secret found taken out of every string the signals carry. Returns what was found (with the
 * secrets), which never leaves the hook.
 */
const scanned = new Set(["user-prompt", "pre-tool", "post-tool"])
const maxFindings = 50

export const applySecrets = async (
  /** @type {import("../hook.js").Plan} */ plan,
  /** @type {any} */ input,
  /** @type {import("../hook.js").HookContext} */ ctx
) => {
  const own = plan.signals[plan.signals.length - 1]
  if (!own || !scanned.has(own.type)) return []
  const { found, truncated } = scanHookInput(input, await customPatterns(ctx.settings, ctx.env))
  const metadata = /** @type {Record<string, unknown>} */ (own.metadata ?? {})
  const command = typeof metadata.command === "string" ? metadata.command : undefined
  const cwd = typeof input.cwd === "string" ? input.cwd : undefined
  const paths = own.type === "user-prompt" ? [] : pathsOf(input.tool_input ?? input.toolArgs ?? input, command, cwd, ctx.env.HOME)
  /** @type {Map<string, { kind: string, where: string, fingerprint: string }>} */
  const findings = new Map()
  if (found.length > 0) {
    const key = fingerprintKey(ctx.settings.fingerprint_key, ctx.env)
    for (const f of found) {
      const fingerprint = fingerprintOf(key, f.kind, f.secret)
      findings.set(`${f.kind}\0${f.where}\0${fingerprint}`, { kind: f.kind, where: f.where, fingerprint })
    }
  }
  own.metadata = {
    ...metadata,
    ...(findings.size > 0 ? { findings: [...findings.values()].slice(0, maxFindings) } : {}),
    ...(paths.length > 0 ? { paths } : {}),
    ...(truncated ? { scan_truncated: true } : {})
  }
  for (const s of plan.signals) s.metadata = /** @type {Record<string, unknown>} */ (redactValue(s.metadata, found))
  // Kept in memory only, for a redact verdict's rewrite of the tool's input.
  return found
}
