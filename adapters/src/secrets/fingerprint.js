// @ts-check
import { builtin, chmodSync, mkdirSync, readFileSync, writeFileSync } from "../builtins.js"
import { join } from "node:path"
import { adapterHome } from "../settings.js"

/** node:crypto, loaded only when a secret was found (a hook without one spares its start-up). */
const crypto = () => /** @type {typeof import("node:crypto")} */ (builtin("node:crypto"))

/**
 * The key of the fingerprints: SIGNAL_ENGINE_FINGERPRINT_KEY or `fingerprint_key` in the settings
 * (an org that hands every machine the same one recognises a secret across its developers), else
 * one made at random for this install on first use (`fingerprint.key`, 0600 beside the settings).
 */
export const fingerprintKey = (/** @type {string | undefined} */ configured, env = process.env) => {
  if (configured) return configured
  const path = join(adapterHome(env), "fingerprint.key")
  try {
    const key = readFileSync(path, "utf8").trim()
    if (key.length >= 32) return key
  } catch {
    // none yet
  }
  const key = crypto().randomBytes(32).toString("hex")
  mkdirSync(adapterHome(env), { recursive: true, mode: 0o700 })
  writeFileSync(path, `${key}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
  return key
}

/**
 * A keyed fingerprint of one secret (HMAC-SHA256, 128 bits in hex): the same secret gives the
 * same fingerprint under one key, and without the key it tells nothing of the secret, not even
 * whether a guessed secret is the one.
 */
export const fingerprintOf = (/** @type {string} */ key, /** @type {string} */ kind, /** @type {string} */ secret) =>
  crypto().createHmac("sha256", key).update(`${kind}\0${secret}`).digest("hex").slice(0, 32)
