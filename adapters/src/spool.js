// @ts-check
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from "./builtins.js"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { sendSignals } from "./client.js"
import { adapterHome } from "./settings.js"

/**
 * What a hook could not deliver waits here, one file per hook event, each signal with the
 * idempotency key it was first sent with: sent again later, a signal the service did take after
 * all is answered as a duplicate and counted once.
 */
export const spoolDir = (env = process.env) => join(adapterHome(env), "spool")

/** @param {import("./client.js").Signal[]} signals */
export const spool = (signals, env = process.env) => {
  const dir = spoolDir(env)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const name = `${Date.now().toString().padStart(15, "0")}-${process.pid}-${Math.random().toString(36).slice(2, 8)}.json`
  const tmp = join(dir, `.${name}.tmp`)
  writeFileSync(tmp, JSON.stringify({ spooled_at: new Date().toISOString(), signals }), { mode: 0o600 })
  renameSync(tmp, join(dir, name))
}

export const spooledFiles = (env = process.env) => {
  try {
    return readdirSync(spoolDir(env)).filter((f) => f.endsWith(".json")).sort()
  } catch {
    return []
  }
}

/** One flush at a time; a lock left by a flush that died is taken over after a minute. */
const lock = (/** @type {string} */ dir) => {
  const path = join(dir, ".lock")
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(path, "wx"))
      return () => {
        try {
          unlinkSync(path)
        } catch {}
      }
    } catch {
      try {
        if (Date.now() - statSync(path).mtimeMs < 60_000) return undefined
        unlinkSync(path)
      } catch {}
    }
  }
  return undefined
}

/**
 * Sends what is spooled, oldest first, in batches; stops at the first batch the service does not
 * answer. A batch the service refuses outright (a revoked key, say) moves to spool/rejected/ to be
 * looked at, rather than blocking what comes after it.
 * @returns {Promise<{ sent: number, left: number, rejected: number, locked?: boolean, error?: string }>}
 */
export const flush = async (/** @type {import("./settings.js").Settings} */ settings, env = process.env) => {
  const dir = spoolDir(env)
  const files = spooledFiles(env)
  if (files.length === 0) return { sent: 0, left: 0, rejected: 0 }
  if (!settings.url || !settings.license_key) return { sent: 0, left: files.length, rejected: 0, error: "not configured" }
  const release = lock(dir)
  if (!release) return { sent: 0, left: files.length, rejected: 0, locked: true }
  let sent = 0
  let rejected = 0
  try {
    for (let i = 0; i < files.length; i++) {
      const file = join(dir, /** @type {string} */ (files[i]))
      let signals
      try {
        signals = JSON.parse(readFileSync(file, "utf8")).signals
      } catch {
        continue // taken by another flush meanwhile
      }
      const outcome = await sendSignals({ url: settings.url, license_key: settings.license_key }, signals, Math.max(settings.timeout_ms, 10_000))
      if (outcome.kind === "unreachable") return { sent, left: files.length - i, rejected, error: outcome.reason }
      if (outcome.kind === "rejected") {
        mkdirSync(join(dir, "rejected"), { recursive: true })
        renameSync(file, join(dir, "rejected", /** @type {string} */ (files[i])))
        rejected += signals.length
        continue
      }
      unlinkSync(file)
      sent += signals.length
    }
    return { sent, left: 0, rejected }
  } finally {
    release()
  }
}

/** Starts `signal-engine-adapter <args>` on its own (a flush, a settle), so the hook that asks need not wait for it. */
export const inBackground = async (/** @type {string[]} */ args, env = process.env) => {
  const { spawn } = await import("node:child_process")
  const bin = fileURLToPath(new URL("../bin/signal-engine-adapter.js", import.meta.url))
  const child = spawn(process.execPath, [bin, ...args], { detached: true, stdio: "ignore", env })
  child.unref()
}
